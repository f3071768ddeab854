// The daemon-wide max_calls_in_parallel seen from outside the engine: with its live calls
// all in one campaign, a lead of another campaign (below its own limit) waits for the
// daemon-wide limit, and `explain` says so rather than "next in line"; `status` and
// `/metrics` show the limit and the live calls over all campaigns. The real daemon
// (startApp) on real config files, the simulator as the service.
import { afterEach, describe, expect, it } from 'vitest';
import { explainNumber } from '../../src/explain/explain.js';
import { goodCampaign, leadCsv, startDaemon, type Daemon } from '../fixtures/bad-input/daemon-harness.js';
import { waitUntil } from '../helpers/wait.js';

let daemon: Daemon | null = null;
afterEach(async () => {
  await daemon?.close();
  daemon = null;
});

describe('the daemon-wide limit of live calls', () => {
  it('is named by explain when full, and shown by status and /metrics', async () => {
    daemon = await startDaemon({
      // Slow enough that the daemon's heartbeat stays fresh for explain; calls last an hour.
      scale: 20,
      callDurationSeconds: { min: 3600, max: 3600 },
      daemonLines: ['max_calls_in_parallel: 2'],
      campaigns: { 'a-first.yaml': goodCampaign('a-first', '../leads/a.csv'), 'b-second.yaml': goodCampaign('b-second', '../leads/b.csv') },
      leads: { 'a.csv': leadCsv(2), 'b.csv': leadCsv(2, 50) },
    });
    const d = daemon;
    await waitUntil(async () => (await d.status()).daemon.live_calls === 2, { message: 'two live calls' });
    const report = await d.status();
    expect(report.daemon).toMatchObject({ running: true, max_calls_in_parallel: 2, live_calls: 2 });
    // Both slots went to one campaign; the other is below its own limit of 2.
    const perCampaign = new Map(report.campaigns.map((c) => [c.name, c.live_calls]));
    const waiting = perCampaign.get('a-first') === 2 ? 'b-second' : 'a-first';
    expect(perCampaign.get(waiting)).toBe(0);

    const lead = await d.app.db
      .selectFrom('leads')
      .innerJoin('campaigns', 'campaigns.id', 'leads.campaign_id')
      .select('leads.phone_number')
      .where('campaigns.name', '=', waiting)
      .orderBy('leads.id')
      .executeTakeFirstOrThrow();
    const why = await explainNumber(d.app.db, lead.phone_number, d.clock.now(), () => true);
    expect(why.daemon_running).toBe(true);
    expect(why.leads).toHaveLength(1);
    expect(why.leads[0]).toMatchObject({ campaign: waiting, state: 'pending', reason: 'daemon-at-limit' });
    expect(why.leads[0]!.message).toContain('daemon-wide limit');
    expect(why.leads[0]!.message).toContain('2/2');
    expect(why.leads[0]!.message).not.toContain('next in line');

    const metrics = await fetch(`http://127.0.0.1:${d.app.httpPort}/metrics`).then((r) => r.text());
    expect(metrics).toMatch(/^campaignd_daemon_max_calls_in_parallel 2$/m);
    await waitUntil(async () => /^campaignd_daemon_live_calls 2$/m.test(await fetch(`http://127.0.0.1:${d.app.httpPort}/metrics`).then((r) => r.text())), {
      message: 'the live-calls gauge at 2',
    });
  }, 60_000);
});
