// The pre-dial check wired by the composition root (startApp): a campaign file's `predial`,
// its secret read from the daemon's environment, the check signed with it, and the checks
// counted on /metrics (campaignd_predial_checks_total) and in status. The real daemon on
// real config files, the simulator as the service, a check endpoint on loopback.
import { afterEach, describe, expect, it } from 'vitest';
import { verifySignature } from '../../src/hooks/signature.js';
import { DAEMON_SECRET, goodCampaign, leadCsv, startDaemon, type Daemon } from '../fixtures/bad-input/daemon-harness.js';
import { ok, startPredialServer, type PredialServer } from '../helpers/predial-server.js';
import { waitUntil } from '../helpers/wait.js';

let daemon: Daemon | null = null;
let server: PredialServer | null = null;
afterEach(async () => {
  await daemon?.close();
  await server?.close();
  daemon = null;
  server = null;
});

describe('the daemon with a pre-dial check', () => {
  it('signs each check with the secret its variable holds, calls only on yes, and counts the checks in status and /metrics', async () => {
    const [refused] = leadCsv(1).split('\n')[1]!.split(',');
    server = await startPredialServer((req) => (req.json.phone_number === refused ? ok({ call: false, reason: 'do not call' }) : ok({ call: true })));
    daemon = await startDaemon({
      scale: 20,
      callDurationSeconds: { min: 30, max: 30 },
      campaigns: { 'checked.yaml': goodCampaign('checked', '../leads/a.csv', `predial: { url: "${server.url}", secret_env: BAD_INPUT_SECRET, timeout_ms: 30000 }`) },
      leads: { 'a.csv': leadCsv(2) },
    });
    const d = daemon;
    await waitUntil(async () => (await d.status()).campaigns[0]?.predial?.checks === 2, { message: 'two checks counted' });
    for (const req of server.seen) expect(verifySignature(DAEMON_SECRET, req.body, String(req.headers['x-campaignd-signature']))).toBe(true);
    await d.waitCampaignDone('checked');
    const lead = await d.app.db.selectFrom('leads').select(['state', 'state_reason']).where('phone_number', '=', refused!).executeTakeFirstOrThrow();
    expect(lead).toEqual({ state: 'cancelled', state_reason: 'do not call' });
    expect(d.sim.state.calls.size).toBe(1);
    expect([...d.sim.state.calls.values()][0]!.client_phone_number).not.toBe(refused);
    const report = await d.status();
    expect(report.campaigns[0]!.predial).toEqual({ checks: 2, failures: 0, last_failure: null });
    const metrics = await fetch(`http://127.0.0.1:${d.app.httpPort}/metrics`).then((r) => r.text());
    expect(metrics).toMatch(/^campaignd_predial_checks_total\{campaign="checked",result="call"\} 1$/m);
    expect(metrics).toMatch(/^campaignd_predial_checks_total\{campaign="checked",result="cancel"\} 1$/m);
    expect(metrics).not.toContain(DAEMON_SECRET);
  }, 60_000);
});
