// A database error while recording make_call's answer (another process holds the write
// lock longer than the busy timeout, e.g. a big `leads import`): the engine must neither
// crash with an unhandled rejection nor lose the slot; the call is followed as unknown,
// found in the call list, and the person is not called again.
import { Writable } from 'node:stream';
import SqliteDatabase from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import type { EngineClient } from '../../src/engine/ports.js';
import { createLogger } from '../../src/log/logger.js';
import { callsByNumber } from '../helpers/invariants.js';
import { allSucceed, phoneNumbers, startStack, type Stack } from '../helpers/stack.js';
import { waitUntil } from '../helpers/wait.js';

let stack: Stack | null = null;
let locker: SqliteDatabase.Database | null = null;
const rejections: unknown[] = [];
const onRejection = (reason: unknown): void => void rejections.push(reason);
afterEach(async () => {
  process.off('unhandledRejection', onRejection);
  if (locker?.open) locker.close();
  locker = null;
  await stack?.close();
  stack = null;
});

describe('engine: store errors', () => {
  it('a locked database while recording the answer: no unhandled rejection, the attempt is followed as unknown, one call', async () => {
    process.on('unhandledRejection', onRejection);
    const [victim, other] = phoneNumbers(2, 90);
    const lines: string[] = [];
    const logger = createLogger({
      level: 'info',
      destination: new Writable({
        write(chunk: Buffer, _enc, done) {
          lines.push(chunk.toString());
          done();
        },
      }),
    });
    stack = await startStack({
      campaigns: [{ settings: { maxCallsInParallel: 1, maxRetries: 0 }, leads: [{ phone: victim! }, { phone: other! }] }],
      fixedOutcomes: allSucceed([victim!, other!], 60),
      webhooks: false,
      logger,
      busyTimeoutMs: 50,
      wrapClient: (inner): EngineClient => ({
        ...inner,
        async makeCall(req, opts) {
          const answer = await inner.makeCall(req, opts);
          if (req.phone_number === victim && !locker) {
            // Another connection takes the write lock just as the answer comes back.
            locker = new SqliteDatabase(stack!.dbFile);
            locker.exec('BEGIN IMMEDIATE');
          }
          return answer;
        },
      }),
    });
    const s = stack;
    await waitUntil(() => rejections.length > 0 || lines.some((l) => l.includes('make_call result could not be recorded')), {
      message: 'the recording failure to be logged',
    });
    const held = locker as SqliteDatabase.Database | null;
    held?.exec('ROLLBACK');
    held?.close();
    expect(rejections).toEqual([]);
    expect(lines.some((l) => l.includes('make_call result could not be recorded'))).toBe(true);
    await s.waitForQuiet();
    await s.assertAllRules();
    expect(callsByNumber(s.simCalls()).get(victim!)).toHaveLength(1);
    const attempts = await s.db.selectFrom('attempts').select(['phone_number', 'state', 'outcome']).where('phone_number', '=', victim!).execute();
    expect(attempts).toEqual([{ phone_number: victim, state: 'ended', outcome: 'success' }]);
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(rejections).toEqual([]);
  });
});
