// The README's quick tour, by hand, command by command as the README writes them: the
// simulator and the daemon started as the bin (so a plain SIGTERM stops each), status,
// explain, the simulator's webhook log, pause, results and validate. The tour must end as
// the demo does: post-call webhooks delivered to the daemon, and every command doing what
// the README says. Run in a copy of config/ on free ports (the README's 8787 and 9464 may
// be taken on a shared machine), otherwise word for word.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BIN, cleanEnv, freePort, ROOT, spawnExecutable, stopAllProcesses, type Proc } from '../helpers/processes.js';
import { waitUntil } from '../helpers/wait.js';

let dir: string | undefined;
afterEach(async () => {
  await stopAllProcesses();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

/** The by-hand commands of the README's quick tour, one a line, comments removed. */
function tourCommands(): string[] {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Quick tour'), readme.indexOf('## Commands'));
  const block = /```sh\n([\s\S]*?)```/.exec(section)![1]!;
  const lines = block.split('\n').map((l) => l.replace(/\s+#.*$/, '').trim());
  return lines.slice(lines.findIndex((l) => l.startsWith('# or by hand')) + 1).filter((l) => l !== '' && !l.startsWith('#'));
}

interface Command {
  env: Record<string, string>;
  program: string;
  args: string[];
}

function parse(line: string, ports: Map<string, string>): Command {
  let text = line;
  for (const [from, to] of ports) text = text.split(from).join(to);
  const words = text.split(/\s+/);
  const env: Record<string, string> = {};
  while (/^[A-Z_]+=/.test(words[0]!)) {
    const [k, v] = words.shift()!.split('=') as [string, string];
    env[k] = v;
  }
  return { env, program: words[0]!, args: words.slice(1) };
}

describe('README quick tour, by hand', () => {
  it('ends with webhooks delivered, every command as written, and SIGTERM stopping the daemon and the simulator', async () => {
    const commands = tourCommands();
    expect(commands.some((c) => c.includes('npx'))).toBe(false);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'campaignd-tour-'));
    fs.cpSync(path.join(ROOT, 'config'), path.join(dir, 'config'), { recursive: true });
    const ports = new Map([
      ['8787', String(await freePort())],
      ['9464', String(await freePort())],
    ]);
    const configFile = path.join(dir, 'config/campaignd.yaml');
    let yaml = fs.readFileSync(configFile, 'utf8');
    for (const [from, to] of ports) yaml = yaml.split(from).join(to);
    fs.writeFileSync(configFile, yaml);
    const cwd = dir;
    const simUrl = `http://127.0.0.1:${ports.get('8787')}`;
    const spawnTour = (name: string, c: Command): Proc => {
      expect(c.program).toBe('bin/campaignd.js');
      return spawnExecutable(name, BIN, c.args, { env: c.env, cwd });
    };
    const oneShot = async (c: Command): Promise<{ code: number; stdout: string; stderr: string }> => {
      expect(c.program).toBe('bin/campaignd.js');
      return runIn(cwd, c);
    };

    let sim: Proc | undefined;
    let daemon: Proc | undefined;
    for (const line of commands) {
      const c = parse(line, ports);
      const sub = c.args[0];
      if (c.program === 'curl') {
        // Webhooks arrive within a second of each call's end, as in the demo.
        let deliveries: { status: number | null; url: string }[] = [];
        await waitUntil(
          async () => {
            deliveries = ((await (await fetch(c.args.at(-1)!)).json()) as { deliveries: typeof deliveries }).deliveries;
            return deliveries.length >= 3;
          },
          { timeoutMs: 30_000, intervalMs: 300, message: 'three post-call webhooks delivered' },
        );
        expect(c.args.at(-1)).toBe(`${simUrl}/__sim/webhooks`);
        // 200: applied to its attempt (202 would be a call the daemon did not know).
        for (const d of deliveries.filter((x) => x.status !== null)) expect(d.status).toBe(200);
        expect(deliveries[0]!.url).toContain(`127.0.0.1:${ports.get('9464')}/webhooks/post-call`);
      } else if (sub === 'simulator') {
        sim = spawnTour('simulator', c);
        await sim.waitForLine(/^simulator listening on http:\/\//);
      } else if (sub === 'run') {
        daemon = spawnTour('daemon', c);
        await daemon.waitForLine(/"msg":"post-call webhook registered with the assistant"/, 30_000);
        await daemon.waitForLine(/"msg":"campaignd running"/, 30_000);
        // The assistant knows where to send webhooks before the first call is placed.
        const log = daemon.stdout();
        const firstCall = log.indexOf('"msg":"call placed"');
        if (firstCall >= 0) expect(log.indexOf('"msg":"post-call webhook registered with the assistant"')).toBeLessThan(firstCall);
      } else if (sub === 'status' && c.args.includes('--watch')) {
        const watch = spawnTour('status --watch', c);
        await watch.waitForLine(/^demo\s+running/, 15_000);
        await watch.stop();
      } else if (sub === 'explain') {
        // Give the tour's number its first call (the README's order: status first, then explain).
        await waitUntil(async () => /#\d+ /.test((await oneShot(c)).stdout), { timeoutMs: 30_000, intervalMs: 500, message: 'an attempt to +15550000102' });
        const r = await oneShot(c);
        expect(r.code).toBe(0);
        expect(r.stdout).toContain('+15550000102 in campaign "demo"');
      } else if (sub === 'campaign') {
        const r = await oneShot(c);
        expect(r.code, r.stderr).toBe(0);
        expect(r.stdout).toContain('campaign "demo": running → paused');
      } else if (sub === 'results') {
        const r = await oneShot(c);
        expect(r.code, r.stderr).toBe(0);
        expect(r.stdout).toMatch(/^\uFEFFcampaign,lead_id,phone_number,/);
        expect(r.stdout).toContain(',service,');
      } else if (sub === 'validate') {
        const r = await oneShot(c);
        expect(r.code, r.stdout + r.stderr).toBe(0);
        expect(r.stdout).toMatch(/campaignd validate: 0 errors, \d+ warnings; 2 campaigns ok \(demo, follow-up\); offline/);
      } else {
        throw new Error(`the test does not know the tour's command: ${line}`);
      }
    }
    expect(daemon?.count(/"source":"webhook"/)).toBeGreaterThan(0);
    // Started as the bin, each is stopped by a plain SIGTERM to its own pid, and exits cleanly.
    expect(await daemon!.stop()).toEqual({ code: 0, signal: null });
    expect(daemon!.stdout()).toContain('stopped cleanly');
    const simExit = await sim!.stop();
    expect(simExit.code === 0 || simExit.signal === 'SIGTERM').toBe(true);
    expect(daemon!.stdout() + daemon!.stderr()).not.toContain('s3cret');
  }, 120_000);
});

/** A one-shot command in the tour's folder (runCampaignd runs from the repository). */
function runIn(cwd: string, c: Command): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(BIN, c.args, { cwd, env: cleanEnv(c.env), timeout: 30_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
    });
  });
}
