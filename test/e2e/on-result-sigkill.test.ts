// move_to across SIGKILLs (README, "On the result"): a real daemon process moves leads to
// another campaign while it is killed with SIGKILL, again and again, and restarted. The
// source lead's `moved` and the target's new lead are written in one transaction (with the
// attempt's end), so there is no moment between the two halves at which a kill could
// land; what this test shows is that kills at any moment of a run of moves leave every
// person in exactly one lead of the target campaign, never two, never none.
import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/store/database.js';
import { stopAllProcesses } from '../helpers/processes.js';
import { waitUntil } from '../helpers/wait.js';
import { daemonEnv, makeWorkspace, numbers, SECRETS, startDaemon, startSimulator, webhookUrl, type Workspace } from './daemon-fixture.js';

let ws: Workspace | undefined;
afterEach(async () => {
  await stopAllProcesses();
  ws?.cleanup();
  ws = undefined;
});

async function rows<T>(file: string, read: (db: ReturnType<typeof openDatabase>['db']) => Promise<T>): Promise<T> {
  const h = openDatabase(file, { readonly: true });
  try {
    return await read(h.db);
  } finally {
    await h.close();
  }
}

describe('move_to: SIGKILL while leads move', () => {
  it('every lead moved ends with exactly one lead in the target campaign', async () => {
    const people = numbers(24, 500);
    const sim = await startSimulator({ token: SECRETS.token, seed: 11, outcomes: 'human=1,busy=0,failed=0,voicemail=0,no-answer=0', callDuration: '1-3' });
    for (const phone of people) await sim.control('extracted', { phone_number: phone, variables: { interest: 'yes' } });
    ws = await makeWorkspace({
      simUrl: sim.url,
      campaigns: [
        { name: 'main', leads: people.map((p) => [p]), maxParallel: 8, maxRetries: 1, retryInterval: 2 },
        // Paused, so that the moved leads wait there to be counted.
        { name: 'sales', leads: [], maxParallel: 1, maxRetries: 0, retryInterval: 2, status: 'paused' },
      ],
    });
    const mainFile = `${ws.dir}/campaigns/main.yaml`;
    const main = JSON.parse(fs.readFileSync(mainFile, 'utf8')) as Record<string, unknown>;
    main.on_result = [{ when: { variable: 'interest', equals: 'yes' }, then: { move_to: 'sales' } }];
    fs.writeFileSync(mainFile, `${JSON.stringify(main, null, 2)}\n`);

    const env = daemonEnv();
    const db = ws.dbPath;
    const moved = () => rows(db, (d) => d.selectFrom('leads').innerJoin('campaigns', 'campaigns.id', 'leads.campaign_id').select('leads.id').where('campaigns.name', '=', 'main').where('leads.state', '=', 'moved').execute()).then((r) => r.length);
    let daemon = await startDaemon(ws, env, 'daemon-1');
    await sim.setWebhook(webhookUrl(ws));
    // Killed as soon as moves are seen, and again just after the restart, while it recovers;
    // then left to finish. The moves come from the call list's confirmation of the webhooks'
    // successes, and one listing confirms every success waiting, so the first kill usually
    // finds all of them moved (with 4 or 8 at a time alike): what the kills land on is the
    // daemon's work around the moves, the move itself being one transaction.
    for (const [i, atLeast] of [4, 12].entries()) {
      await waitUntil(async () => (await moved()) >= atLeast, { message: `${atLeast} leads moved`, timeoutMs: 90_000 });
      daemon.child.kill('SIGKILL');
      expect((await daemon.exited).signal).toBe('SIGKILL');
      daemon = await startDaemon(ws, env, `daemon-${i + 2}`);
    }
    await waitUntil(async () => (await moved()) === people.length, { message: async () => `all ${people.length} moved (now ${await moved()})`, timeoutMs: 120_000 });
    await daemon.stop();

    const leads = await rows(db, (d) =>
      d.selectFrom('leads').innerJoin('campaigns', 'campaigns.id', 'leads.campaign_id').select(['leads.id', 'campaigns.name as campaign', 'leads.phone_number', 'leads.state', 'leads.state_reason', 'leads.source_line']).execute(),
    );
    const source = leads.filter((l) => l.campaign === 'main');
    const target = leads.filter((l) => l.campaign === 'sales');
    // Exactly one target lead per person, each made from the source lead that moved.
    expect(target.map((l) => l.phone_number).sort()).toEqual([...people].sort());
    for (const s of source) {
      const t = target.filter((x) => x.phone_number === s.phone_number);
      expect(t).toHaveLength(1);
      expect(t[0]!.source_line).toBe(s.id);
      expect(s.state_reason).toContain(`; lead ${t[0]!.id} there`);
    }
    expect(daemon.stdout()).not.toContain(SECRETS.token);
  }, 300_000);
});
