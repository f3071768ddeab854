// Callbacks across SIGKILLs (README, "Callbacks the person asks for"): a real daemon process
// schedules callbacks while it is killed with SIGKILL, again and again, and restarted. The
// callback's decision and its scheduling (the callbacks row, the lead due at the asked
// moment, its count) are written in the one transaction that records the asking call's
// outcome, so there is no moment between the two at which a kill could land; what this test
// shows is that kills at any moment leave every person with exactly one callback and
// exactly one callback call, while the webhook and the call list both report every call.
import { afterEach, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import { stopAllProcesses } from '../helpers/processes.js';
import { waitUntil } from '../helpers/wait.js';
import { daemonEnv, makeWorkspace, numbers, SECRETS, startDaemon, readWorkspace, startSimulator, webhookUrl, type Workspace } from './daemon-fixture.js';

let ws: Workspace | undefined;
afterEach(async () => {
  await stopAllProcesses();
  ws?.cleanup();
  ws = undefined;
});

describe('callbacks: SIGKILL while callbacks are decided and placed', () => {
  it('every person gets exactly one callback and one callback call', async () => {
    const people = numbers(16, 600);
    const sim = await startSimulator({ token: SECRETS.token, seed: 12, outcomes: 'human=1,busy=0,failed=0,voicemail=0,no-answer=0', callDuration: '1-3' });
    // Every call asks again: the first asking call schedules, the callback call's ask is refused (max_per_lead 1).
    for (const phone of people) await sim.control('extracted', { phone_number: phone, variables: { callback_at: 'in 5 seconds', topic: 'renewal' } });
    ws = await makeWorkspace({ simUrl: sim.url, campaigns: [{ name: 'main', leads: people.map((p) => [p]), maxParallel: 8, maxRetries: 0, retryInterval: 2 }] });
    const mainFile = `${ws.dir}/campaigns/main.yaml`;
    const main = JSON.parse(fs.readFileSync(mainFile, 'utf8')) as Record<string, unknown>;
    main.callbacks = { variable: 'callback_at', max_per_lead: 1 };
    fs.writeFileSync(mainFile, `${JSON.stringify(main, null, 2)}\n`);

    const env = daemonEnv();
    const w = ws;
    const decided = () => readWorkspace(w, (d) => d.selectFrom('callbacks').select('id').execute()).then((r) => r.length);
    const final = () => readWorkspace(w, (d) => d.selectFrom('leads').select('id').where('state', 'in', ['completed', 'reached-max-retries', 'invalid']).execute()).then((r) => r.length);
    let daemon = await startDaemon(ws, env, 'daemon-1');
    await sim.setWebhook(webhookUrl(ws));
    // Killed as soon as callbacks are decided, and again just after the restart, while the
    // callback calls are placed. The decisions come from the call list's confirmation of the
    // webhooks' successes, and one listing confirms every success waiting, so the first kill
    // usually finds all of them decided (with 4 or 8 at a time alike).
    for (const [i, atLeast] of [3, 12].entries()) {
      await waitUntil(async () => (await decided()) >= atLeast, { message: `${atLeast} callbacks decided`, timeoutMs: 90_000 });
      daemon.child.kill('SIGKILL');
      expect((await daemon.exited).signal).toBe('SIGKILL');
      daemon = await startDaemon(ws, env, `daemon-${i + 2}`);
    }
    // A webhook's success is decided when the call list confirms it (who answered): only
    // then is the callback call's own ask judged, and its refusal recorded.
    const unconfirmed = () => readWorkspace(w, (d) => d.selectFrom('attempts').select('id').where('state', '=', 'ended').where('outcome_source', '=', 'webhook').execute()).then((r) => r.length);
    await waitUntil(async () => (await final()) === people.length && (await unconfirmed()) === 0, {
      message: async () => `all ${people.length} final and confirmed (now ${await final()} final, ${await unconfirmed()} awaiting the call list)`,
      timeoutMs: 120_000,
    });
    await daemon.stop();

    const callbacks = await readWorkspace(w, (d) => d.selectFrom('callbacks').innerJoin('leads', 'leads.id', 'callbacks.lead_id').select(['leads.phone_number', 'callbacks.state', 'callbacks.refused_reason']).execute());
    const calls = await sim.calls();
    for (const phone of people) {
      const mine = callbacks.filter((c) => c.phone_number === phone);
      // One callback placed, and the callback call's own ask refused: never two scheduled, never none.
      expect(mine.map((c) => c.state).sort(), phone).toEqual(['placed', 'refused']);
      expect(mine.find((c) => c.state === 'refused')!.refused_reason).toBe('max_per_lead reached (1)');
      const theirs = calls.filter((c) => c.client_phone_number === phone);
      // The asking call and exactly one callback call (previous.NAME: engine-callbacks.test.ts).
      expect(theirs, phone).toHaveLength(2);
    }
    expect(daemon.stdout()).not.toContain(SECRETS.token);
  }, 300_000);
});
