// The root logger's last line of defence (src/log/logger.ts): every exact secret value is
// scrubbed from each line, wherever it hides, with as many secrets as a daemon of 200
// accounts holds; a line holding none of them is written unchanged.
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log/logger.js';
import { Capture } from '../helpers/capture.js';

describe('logger: secrets scrubbed from every line', () => {
  it('replaces each secret present, every time it occurs, and leaves other lines as they were', async () => {
    const out = new Capture();
    const tokens = Array.from({ length: 200 }, (_, i) => `account-token-${String(i).padStart(3, '0')}-DO-NOT-LOG`);
    const logger = createLogger({ level: 'info', destination: out, secrets: () => [...tokens, 'whsec-abc'] });
    logger.info({ detail: `sent ${tokens[7]} and ${tokens[199]}` }, `echoed ${tokens[7]} whsec-abc`);
    logger.info({ account: 'acme' }, 'call placed');
    await new Promise((r) => setImmediate(r));
    const [first, second] = out.text.trim().split('\n').map((l) => JSON.parse(l) as { msg: string; detail?: string; account?: string });
    expect(first!.msg).toBe('echoed [redacted] [redacted]');
    expect(first!.detail).toBe('sent [redacted] and [redacted]');
    expect(out.text).not.toContain('DO-NOT-LOG');
    expect(second).toMatchObject({ account: 'acme', msg: 'call placed' });
  });
});
