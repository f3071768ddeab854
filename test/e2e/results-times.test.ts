// `campaignd results`: a call's start and end come from one clock (src/results/call-times.ts).
// The simulator runs unscaled and 60x faster than the daemon's clock (the by-hand tour's
// --time-scale 60), with webhooks and by polling alone; for every exported row, CSV and
// JSONL, the call ends no earlier than it starts and its duration fits between the two.
import { parse } from 'csv-parse/sync';
import { afterEach, describe, expect, it } from 'vitest';
import { runCampaignd, stopAllProcesses } from '../helpers/processes.js';
import { waitUntil } from '../helpers/wait.js';
import { campaignState, daemonEnv, makeWorkspace, numbers, SECRETS, startDaemon, startSimulator, webhookUrl, type Workspace } from './daemon-fixture.js';

let ws: Workspace | undefined;
afterEach(async () => {
  await stopAllProcesses();
  ws?.cleanup();
  ws = undefined;
});

interface Row {
  started_at: string | null;
  ended_at: string | null;
  times_from: string | null;
  duration_seconds: number | string | null;
  attempts: number | string;
}

/** Each row's two ends from one clock, in order, with the call's duration between them (stamps are whole seconds). */
function checkRow(row: Row, where: string): void {
  if (Number(row.attempts) === 0) return;
  expect(row.times_from, where).toMatch(/^(service|campaignd)$/);
  expect(row.started_at, where).toBeTruthy();
  expect(row.ended_at, where).toBeTruthy();
  const span = (Date.parse(row.ended_at!) - Date.parse(row.started_at!)) / 1000;
  expect(span, `${where}: ended_at ${row.ended_at} before started_at ${row.started_at}`).toBeGreaterThanOrEqual(0);
  if (row.duration_seconds !== null && row.duration_seconds !== '') {
    expect(Number(row.duration_seconds), `${where}: duration ${row.duration_seconds} s in a span of ${span} s`).toBeLessThanOrEqual(span + 1);
  }
}

const CASES = [
  { name: 'unscaled, with webhooks', scale: '1', duration: '1-3', webhooks: true },
  { name: 'scaled 60x, with webhooks', scale: '60', duration: '30-120', webhooks: true },
  { name: 'scaled 60x, by polling alone', scale: '60', duration: '30-120', webhooks: false },
];

describe('results: start and end of a call from one clock', () => {
  for (const c of CASES) {
    it(c.name, async () => {
      const sim = await startSimulator({ token: SECRETS.token, seed: 3, callDuration: c.duration, outcomes: 'human=0.6,busy=0.2,failed=0.2,voicemail=0,no-answer=0', extra: ['--time-scale', c.scale] });
      // All six calls at once: by polling alone, each wave of calls waits for the call list's
      // learning reads (10 s apart), so one wave instead of two halves the run (34 s → 23 s).
      ws = await makeWorkspace({ simUrl: sim.url, campaigns: [{ name: 'times', leads: numbers(6).map((n) => [n]), maxParallel: 6, maxRetries: 0, retryInterval: 1 }] });
      const workspace = ws;
      if (c.webhooks) await sim.setWebhook(webhookUrl(workspace));
      const daemon = await startDaemon(workspace, daemonEnv());
      await waitUntil(async () => (await campaignState(workspace, 'times')) === 'completed', { timeoutMs: 90_000, intervalMs: 300, message: 'campaign times completed' });
      await daemon.stop();

      const csv = await runCampaignd(['results', 'times', '--format', 'csv', '--no-bom', '--config', workspace.configPath]);
      expect(csv.code, csv.stderr).toBe(0);
      const rows = parse(csv.stdout, { columns: true }) as Row[];
      expect(rows).toHaveLength(6);
      rows.forEach((r, i) => checkRow(r, `CSV row ${i + 1}`));
      // With the service's stamps at hand, both ends are the service's.
      expect(rows.filter((r) => Number(r.attempts) > 0).every((r) => r.times_from === 'service')).toBe(true);

      const jsonl = await runCampaignd(['results', 'times', '--format', 'jsonl', '--config', workspace.configPath]);
      expect(jsonl.code, jsonl.stderr).toBe(0);
      const records = jsonl.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as Row & { attempt_history: Row[] });
      expect(records).toHaveLength(6);
      records.forEach((r, i) => {
        checkRow(r, `JSONL record ${i + 1}`);
        r.attempt_history.forEach((a, k) => checkRow({ ...a, attempts: 1 }, `JSONL record ${i + 1} attempt ${k + 1}`));
      });
    }, 120_000);
  }
});
