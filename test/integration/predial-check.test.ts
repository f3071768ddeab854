// askPredial (src/engine/predial.ts) over real HTTP (src/engine/predial-post.ts, undici) to
// a check endpoint on loopback, its timeout on a ManualClock: the body and the hooks'
// signature, each kind of answer, and every way a check can fail. A failure is never a call.
import { afterEach, describe, expect, it } from 'vitest';
import { askPredial, type PredialLead } from '../../src/engine/predial.js';
import { PREDIAL_FAILURE_DEFER_MS } from '../../src/engine/policy.js';
import { verifySignature } from '../../src/hooks/signature.js';
import { createPredialPost } from '../../src/engine/predial-post.js';
import { ManualClock } from '../../src/time/clock.js';
import { ok, startPredialServer, type PredialAnswer, type PredialServer } from '../helpers/predial-server.js';
import { waitUntil } from '../helpers/wait.js';

const SECRET = 'predial-secret-0123456789';
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const lead: PredialLead = { campaign: 'spring', leadId: 42, phoneNumber: '+12025550100', variables: { first_name: 'Ada' }, attempt: 2 };

async function setup(answer: PredialAnswer): Promise<{ server: PredialServer; clock: ManualClock; ask: () => ReturnType<typeof askPredial> }> {
  const server = await startPredialServer(() => answer);
  cleanups.push(() => server.close());
  const http = createPredialPost();
  cleanups.push(() => http.close());
  const clock = new ManualClock(Date.UTC(2026, 0, 5, 10, 0, 0));
  const config = { url: server.url, secretEnv: 'PREDIAL_SECRET', timeoutMs: 2000 };
  const ask = () => askPredial({ clock, post: http.post, secret: (name) => (name === 'PREDIAL_SECRET' ? SECRET : undefined) }, config, lead);
  return { server, clock, ask };
}

describe('the pre-dial check', () => {
  it('posts the lead as JSON, signed as hooks are, and calls on {"call": true}', async () => {
    const { server, ask } = await setup(ok({ call: true }));
    expect(await ask()).toEqual({ kind: 'call' });
    const [req] = server.seen;
    expect(req!.json).toEqual({ campaign: 'spring', lead_id: 42, phone_number: '+12025550100', variables: { first_name: 'Ada' }, attempt: 2 });
    expect(req!.headers['content-type']).toBe('application/json');
    expect(verifySignature(SECRET, req!.body, String(req!.headers['x-campaignd-signature']))).toBe(true);
    expect(String(req!.headers['x-campaignd-signature'])).toMatch(new RegExp(`^t=${Date.UTC(2026, 0, 5, 10, 0, 0) / 1000},v1=`));
  });

  it('cancels on {"call": false, "reason": …} and defers on retry_after_seconds', async () => {
    expect(await (await setup(ok({ call: false, reason: ' bought already ' }))).ask()).toEqual({ kind: 'cancel', reason: 'bought already' });
    expect(await (await setup(ok({ call: false, retry_after_seconds: 900 }))).ask()).toEqual({ kind: 'defer', afterMs: 900_000, detail: 'pre-dial check: not now' });
    // At least a second, at most a month; a reason given with it is kept in the detail.
    expect(await (await setup(ok({ call: false, retry_after_seconds: 0, reason: 'in a meeting' }))).ask()).toEqual({ kind: 'defer', afterMs: 1000, detail: 'pre-dial check: not now (in a meeting)' });
    expect(await (await setup(ok({ call: false, retry_after_seconds: 1e12 }))).ask()).toMatchObject({ kind: 'defer', afterMs: 31 * 86_400_000 });
  });

  it('fails (defers, never calls) on a timeout on the engine clock, a 500, a non-JSON or an unexpected answer, a refused connection, no secret', async () => {
    const slow = await setup('hang');
    const pending = slow.ask();
    await waitUntil(() => slow.server.seen.length === 1, { message: 'the check request arrived' });
    await slow.clock.advance(1999);
    let settled = false;
    void pending.then(() => (settled = true));
    await slow.clock.advance(0);
    expect(settled).toBe(false);
    await slow.clock.advance(1);
    expect(await pending).toEqual({ kind: 'failed', afterMs: PREDIAL_FAILURE_DEFER_MS, detail: 'pre-dial check failed: no answer within 2000 ms' });

    const cases: [PredialAnswer, string][] = [
      [{ status: 500, body: '{"call": true}' }, 'answered HTTP 500'],
      [{ status: 200, body: '<html>login</html>' }, 'answer is not JSON'],
      [ok({ call: 'yes' }), 'answer has no boolean "call"'],
      [ok([true]), 'answer is not a JSON object'],
      [ok({ call: false }), '"call": false without "reason" or "retry_after_seconds"'],
      [ok({ call: false, retry_after_seconds: -5 }), '"retry_after_seconds" is not a number of seconds ≥ 0'],
    ];
    for (const [answer, detail] of cases) {
      expect(await (await setup(answer)).ask(), detail).toEqual({ kind: 'failed', afterMs: PREDIAL_FAILURE_DEFER_MS, detail: `pre-dial check failed: ${detail}` });
    }

    const gone = await setup(ok({ call: true }));
    await gone.server.close();
    expect(await gone.ask()).toMatchObject({ kind: 'failed', detail: expect.stringMatching(/^pre-dial check failed: request failed: /) });

    const http = createPredialPost();
    cleanups.push(() => http.close());
    const unset = await askPredial({ clock: new ManualClock(), post: http.post, secret: () => undefined }, { url: gone.server.url, secretEnv: 'NOPE', timeoutMs: 2000 }, lead);
    expect(unset).toMatchObject({ kind: 'failed', detail: 'pre-dial check failed: $NOPE (predial.secret_env) is not set' });
  });
});
