import fs from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runStatus, type StatusDeps } from '../../src/cli/status.js';
import { CliError, type CliIo } from '../../src/cli/io.js';
import { ManualClock } from '../../src/time/clock.js';
import type { StatusReport } from '../../src/status/types.js';
import { campaignConfig, createStore, insertAttempt, insertCampaign, insertLeads, makeTempConfig, upsertDaemon } from './status-fixture.js';

const NOW = Date.UTC(2026, 10, 22, 8, 0, 0);

class Capture extends Writable {
  text = '';
  isTTY?: boolean;
  private waiters: { pattern: RegExp; count: number; resolve: () => void }[] = [];
  constructor(tty = false) {
    super();
    if (tty) this.isTTY = true;
  }
  override _write(chunk: Buffer, _enc: BufferEncoding, cb: () => void): void {
    this.text += String(chunk);
    this.check();
    cb();
  }
  /** Resolves once `pattern` occurs `count` times in the output. */
  waitFor(pattern: RegExp, count = 1): Promise<void> {
    return new Promise((resolve) => {
      this.waiters.push({ pattern, count, resolve });
      this.check();
    });
  }
  private check(): void {
    this.waiters = this.waiters.filter((w) => {
      const n = this.text.match(new RegExp(w.pattern.source, 'g'))?.length ?? 0;
      if (n >= w.count) w.resolve();
      return n < w.count;
    });
  }
}

let tmp: ReturnType<typeof makeTempConfig>;
let clock: ManualClock;

function io(options: { tty?: boolean; env?: Record<string, string> } = {}): CliIo & { stdout: Capture; stderr: Capture } {
  return { stdout: new Capture(options.tty), stderr: new Capture(), env: { ...options.env }, cwd: tmp.dir };
}
function deps(extra: Partial<StatusDeps> = {}): StatusDeps {
  return { clock, isPidAlive: () => true, hostname: 'testhost', ...extra };
}

beforeEach(async () => {
  tmp = makeTempConfig();
  clock = new ManualClock(NOW);
  const store = await createStore(tmp.dbPath);
  const spring = await insertCampaign(store.db, campaignConfig('spring-renewals'));
  const [lead] = await insertLeads(store.db, spring, 'pending', 3);
  await insertAttempt(store.db, { campaignId: spring, leadId: lead!, state: 'placed', createdAt: NOW - 60_000 });
  await insertCampaign(store.db, campaignConfig('broken'), { problem: 'campaign file no longer parses: see "campaignd validate"' });
  await upsertDaemon(store.db, { instance: 'a', pid: 4321, hostname: 'testhost', heartbeatAt: NOW - 1000 });
  await store.close();
});
afterEach(() => tmp.cleanup());

describe('campaignd status', () => {
  it('--json prints one document and exits 1 when a campaign has a problem', async () => {
    const out = io();
    const code = await runStatus(['--json', '--config', tmp.configPath], out, deps());
    expect(code).toBe(1);
    const report = JSON.parse(out.stdout.text) as StatusReport;
    expect(report.daemon).toMatchObject({ running: true, pid: 4321, api: 'ok' });
    expect(report.campaigns.map((c) => [c.name, c.problem !== null])).toEqual([
      ['broken', true],
      ['spring-renewals', false],
    ]);
  });

  it('CAMPAIGN limits the report; a healthy campaign exits 0', async () => {
    const out = io();
    expect(await runStatus(['spring-renewals', '--json', '--config', tmp.configPath], out, deps())).toBe(0);
    const report = JSON.parse(out.stdout.text) as StatusReport;
    expect(report.campaigns).toHaveLength(1);
    expect(report.campaigns[0]).toMatchObject({ name: 'spring-renewals', live_calls: 1, leads: { total: 3, pending: 3 }, attempts: { total: 1, today: 1 } });
  });

  it('shows the daemon-wide limit and the live calls over all campaigns, even for one CAMPAIGN', async () => {
    const store = await createStore(tmp.dbPath);
    await upsertDaemon(store.db, { instance: 'a', pid: 4321, hostname: 'testhost', heartbeatAt: NOW - 1000, maxCalls: 2 });
    // A second live call, in the other campaign: the limit counts both.
    const broken = (await store.db.selectFrom('campaigns').select('id').where('name', '=', 'broken').executeTakeFirstOrThrow()).id;
    const [lead] = await insertLeads(store.db, broken, 'calling', 1);
    await insertAttempt(store.db, { campaignId: broken, leadId: lead!, state: 'placed', createdAt: NOW - 30_000 });
    await store.close();
    const json = io();
    await runStatus(['spring-renewals', '--json', '--config', tmp.configPath], json, deps());
    const report = JSON.parse(json.stdout.text) as StatusReport;
    expect(report.daemon).toMatchObject({ max_calls_in_parallel: 2, live_calls: 2 });
    expect(report.campaigns.map((c) => [c.name, c.live_calls])).toEqual([['spring-renewals', 1]]);
    const human = io();
    await runStatus(['spring-renewals', '--config', tmp.configPath], human, deps());
    expect(human.stdout.text.split('\n')[0]).toBe('daemon running (pid 4321 on testhost, v0.1.0) · API ok · heartbeat 1 s ago · live calls 2 / 2');
  });

  it('says the daemon-wide limit is not set (null) when the daemon runs without one', async () => {
    const out = io();
    await runStatus(['--json', '--config', tmp.configPath], out, deps());
    expect((JSON.parse(out.stdout.text) as StatusReport).daemon).toMatchObject({ max_calls_in_parallel: null, live_calls: 1 });
  });

  it('exits 1 when the token is rejected', async () => {
    const store = await createStore(tmp.dbPath);
    await upsertDaemon(store.db, { instance: 'a', pid: 4321, hostname: 'testhost', heartbeatAt: NOW - 1000, api: 'token-rejected', apiDetail: 'HTTP 401' });
    await store.close();
    const out = io();
    expect(await runStatus(['spring-renewals', '--config', tmp.configPath], out, deps())).toBe(1);
    expect(out.stdout.text).toContain('! no working API token: HTTP 401; ');
  });

  it('prints a plain table without colour when stdout is not a terminal', async () => {
    const out = io();
    await runStatus(['--config', tmp.configPath], out, deps());
    const text = out.stdout.text;
    expect(text).not.toContain('\u001b[');
    const lines = text.split('\n');
    expect(lines[0]).toBe('daemon running (pid 4321 on testhost, v0.1.0) · API ok · heartbeat 1 s ago · live calls 1');
    expect(text).toMatch(/CAMPAIGN\s+STATE\s+WINDOW\s+LIVE\s+PENDING/);
    const spring = lines.find((l) => l.startsWith('spring-renewals'));
    expect(spring).toMatch(/running\s+closed, opens Mon 09:00 Europe\/Berlin \(in 1 d\)\s+1\/5\s+3\s+0/);
    expect(text).toContain('! broken: campaign file no longer parses: see "campaignd validate"');
  });

  it('uses colour on a terminal unless NO_COLOR is set', async () => {
    const tty = io({ tty: true });
    await runStatus(['--config', tmp.configPath], tty, deps());
    expect(tty.stdout.text).toContain('\u001b[32mdaemon running');
    const noColor = io({ tty: true, env: { NO_COLOR: '1' } });
    await runStatus(['--config', tmp.configPath], noColor, deps());
    expect(noColor.stdout.text).not.toContain('\u001b[');
  });

  it('an unknown CAMPAIGN is a usage error (exit 2) naming the known ones', async () => {
    const err = await runStatus(['nope', '--config', tmp.configPath], io(), deps()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CliError);
    expect((err as CliError).exitCode).toBe(2);
    expect((err as CliError).message).toContain('no campaign named "nope"');
    expect((err as CliError).message).toContain('known: broken, spring-renewals');
  });

  it('a missing database says so and exits 1', async () => {
    fs.rmSync(tmp.dbPath);
    for (const suffix of ['-wal', '-shm']) fs.rmSync(tmp.dbPath + suffix, { force: true });
    const err = await runStatus(['--config', tmp.configPath], io(), deps()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CliError);
    expect((err as CliError).exitCode).toBe(1);
    expect((err as CliError).message).toBe(`no database at ${tmp.dbPath}: has the daemon run yet?`);
  });

  it('falls back to $CAMPAIGND_DATABASE when the config file cannot be read', async () => {
    const out = io({ env: { CAMPAIGND_DATABASE: path.basename(tmp.dbPath) } });
    expect(await runStatus(['spring-renewals', '--json', '--config', 'missing.yaml'], out, deps())).toBe(0);
    expect((JSON.parse(out.stdout.text) as StatusReport).campaigns[0]?.name).toBe('spring-renewals');
    const err = await runStatus(['--config', 'missing.yaml'], io(), deps()).catch((e: unknown) => e);
    expect((err as CliError).exitCode).toBe(2);
  });

  it('--watch redraws in place every second until stopped', async () => {
    const out = io({ tty: true, env: { NO_COLOR: '1' } });
    const stop = new AbortController();
    const running = runStatus(['spring-renewals', '--watch', '--config', tmp.configPath], out, deps({ signal: stop.signal }));
    await out.stdout.waitFor(/daemon running/);
    expect(out.stdout.text.startsWith('\u001b[H\u001b[2J')).toBe(true);
    // the daemon stops beating: after 10 s the next frame says so
    await clock.advance(11_000);
    await out.stdout.waitFor(/daemon not running/);
    expect(out.stdout.text.match(/\u001b\[H\u001b\[2J/g)?.length).toBeGreaterThanOrEqual(2);
    stop.abort();
    expect(await running).toBe(0);
  });

  it('--help prints usage and exits 0', async () => {
    const out = io();
    expect(await runStatus(['--help'], out, deps())).toBe(0);
    expect(out.stdout.text).toContain('Usage: campaignd status [CAMPAIGN]');
  });
});
