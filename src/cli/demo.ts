import { existsSync } from 'node:fs';
import { cp, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { parseDocument } from 'yaml';
import { createLogger } from '../log/logger.js';
import { startSimulator } from '../simulator/server.js';
import { openDatabase } from '../store/database.js';
import { collectStatus } from '../status/collect.js';
import { renderStatus } from '../status/render.js';
import { scaledClock, systemClock } from '../time/clock.js';
import { version } from '../version.js';
import { pidAlive } from '../lifecycle/daemon-row.js';
import { parseCommandArgs } from './args.js';
import { askForDemoCallback, DEMO_CAMPAIGN, DEMO_CONVERSATION_MIX, demoStory, FOLLOW_UP_CAMPAIGN } from './demo-story.js';
import { CliError, EXIT, type CliIo } from './io.js';
import { runCommand } from './run.js';

export const DEMO_HELP = `campaignd demo: the simulator and the daemon in one process, on the bundled example
config (config/), with time sped up. The simulated people answer, say whether they are
interested, or that it is a wrong number; the demo campaign's on_result rules act on it
(the interested move to the follow-up campaign), and one person asks to be called back
in five minutes. Shows live status and exits 0 when both
campaigns are complete (well under two minutes). Nothing is written into the repository:
the database and the log go to a fresh temporary folder.

Usage: campaignd demo [--time-scale X] [--seed N] [--timeout SECONDS]

  --time-scale X    simulated time runs X times faster (default 30)
  --seed N          seed of the simulated call outcomes (default 1)
  --timeout S       give up after S real seconds (default 110)
`;

// The package's config/ folder: two levels above src/cli/ (the sources) and above dist/app/
// (the bundle the bin runs), three above dist/src/cli/ (tsc's output).
const bundledConfig = [2, 3]
  .map((up) => path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../'.repeat(up), 'config'))
  .find((dir) => existsSync(path.join(dir, 'campaignd.yaml')));

/** `campaignd demo`: a whole campaign against the simulator, start to finish. */
export async function demoCommand(args: string[], io: CliIo): Promise<number> {
  const { values } = parseCommandArgs(
    {
      args,
      options: {
        'time-scale': { type: 'string', default: '30' },
        seed: { type: 'string', default: '1' },
        timeout: { type: 'string', default: '110' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    },
    DEMO_HELP,
  );
  if (values.help) {
    io.stdout.write(DEMO_HELP);
    return EXIT.ok;
  }
  const scale = Number(values['time-scale']);
  const timeoutMs = Number(values.timeout) * 1000;
  if (!(scale > 0) || !(timeoutMs > 0)) throw new CliError('--time-scale and --timeout must be positive numbers', EXIT.usage);

  // Daemon and simulator share one sped-up clock, so retry intervals and call
  // durations shrink together and the service's timestamps agree with ours.
  const clock = scaledClock(scale);
  const work = await mkdtemp(path.join(os.tmpdir(), 'campaignd-demo-'));
  const token = `demo-${randomBytes(6).toString('hex')}`;
  const secret = randomBytes(16).toString('hex');
  const sim = await startSimulator({
    clock,
    networkClock: systemClock,
    tokens: [token],
    seed: Number(values.seed),
    callDurationSeconds: { min: 20, max: 90 },
    conversations: 'mix',
    conversationMix: DEMO_CONVERSATION_MIX,
  });
  await askForDemoCallback(sim.url);
  const configFile = await prepareConfig(work, sim.url);
  const logFile = path.join(work, 'campaignd.log');
  const logger = createLogger({ level: 'info', destination: (await import('pino')).default.destination({ dest: logFile, sync: false }), secrets: () => [token, secret] });

  io.stdout.write(`campaignd demo: simulator at ${sim.url}, time ${scale}x, work folder ${work}\n`);
  io.stdout.write(`daemon log: ${logFile}\n\n`);
  const stop = new AbortController();
  let httpPort: number | null = null;
  const env: NodeJS.ProcessEnv = { ...io.env, CAMPAIGND_API_TOKEN: token, CAMPAIGND_WEBHOOK_SECRET: secret, CAMPAIGND_LOG_LEVEL: 'info' };
  delete env.CAMPAIGND_DATABASE;
  delete env.CAMPAIGND_API_BASE_URL;
  const daemon = runCommand(['--config', configFile], { ...io, env, stdout: nullStream(), stderr: io.stderr }, {
    clock,
    logger,
    stopSignal: stop.signal,
    noSignals: true,
    onStarted: (info) => (httpPort = info.httpPort),
  });

  let exitCode: number = EXIT.problems;
  try {
    // The daemon registered its webhook with the simulator's assistant (webhook.register) before it reported started.
    await waitFor(() => httpPort !== null, daemon, 15_000);
    exitCode = await watchUntilDone(path.join(work, 'data', 'campaignd.db'), io, timeoutMs, clock.now, sim);
  } finally {
    stop.abort();
    await daemon.catch(() => EXIT.problems);
    await sim.close();
  }
  return exitCode;
}

/** Copies the bundled config into the work folder, pointed at the simulator and a free port. */
async function prepareConfig(work: string, simUrl: string): Promise<string> {
  const dir = path.join(work, 'config');
  if (!bundledConfig) throw new CliError('the bundled example config (config/campaignd.yaml) is missing from this installation: reinstall campaignd', EXIT.problems);
  await cp(bundledConfig, dir, { recursive: true });
  const file = path.join(dir, 'campaignd.yaml');
  const doc = parseDocument(await readFile(file, 'utf8'));
  doc.setIn(['api', 'base_url'], simUrl);
  doc.setIn(['database'], path.join(work, 'data', 'campaignd.db'));
  doc.setIn(['http', 'listen'], '127.0.0.1:0');
  // The daemon points the simulator's assistant at itself once its port is bound, as the tour's daemon does.
  doc.setIn(['webhook', 'register'], true);
  await writeFile(file, doc.toString());
  return file;
}

async function watchUntilDone(
  dbFile: string,
  io: CliIo,
  timeoutMs: number,
  now: () => number,
  sim: Awaited<ReturnType<typeof startSimulator>>,
): Promise<number> {
  const started = Date.now();
  const tty = io.stdout.isTTY === true;
  const store = openDatabase(dbFile, { readonly: true });
  const ver = await version();
  let lastPrinted = 0;
  try {
    for (;;) {
      const report = await collectStatus(store.db, { now: now(), version: ver, isPidAlive: pidAlive, hostname: os.hostname() });
      const table = renderStatus(report, { now: now(), color: tty });
      const demo = report.campaigns.find((c) => c.name === DEMO_CAMPAIGN);
      // The follow-up campaign runs again whenever a lead is moved to it: done once both are.
      const done = demo?.state === 'completed' && report.campaigns.find((c) => c.name === FOLLOW_UP_CAMPAIGN)?.state === 'completed';
      if (tty) io.stdout.write(`\u001b[H\u001b[2J${table}\n`);
      else if (done || Date.now() - lastPrinted >= 5000) {
        io.stdout.write(`${table}\n\n`);
        lastPrinted = Date.now();
      }
      if (done && demo) {
        io.stdout.write(
          `\ndemo complete in ${Math.round((Date.now() - started) / 1000)} s: ${demo.leads.completed} leads reached, ` +
            `${demo.leads.reached_max_retries} gave up after retries, ${demo.leads.invalid} invalid, ${demo.leads.suppressed} suppressed; ` +
            `${demo.attempts.total} attempts, ${sim.state.calls.size} calls seen by the simulator, ` +
            `${sim.state.webhookDeliveries.length} post-call webhooks delivered.\n`,
        );
        for (const line of demoStory(report, sim.state.calls.values())) io.stdout.write(`${line}\n`);
        return EXIT.ok;
      }
      if (Date.now() - started > timeoutMs) {
        io.stderr.write(`campaignd demo: the campaign did not complete within ${timeoutMs / 1000} s\n`);
        return EXIT.problems;
      }
      await systemClock.sleep(1000);
    }
  } finally {
    await store.close();
  }
}

async function waitFor(cond: () => boolean, failed: Promise<number>, ms: number): Promise<void> {
  let exited = false;
  void failed.then(() => (exited = true));
  const until = Date.now() + ms;
  while (!cond()) {
    if (exited) throw new CliError('the daemon stopped during start-up (see the log)', EXIT.problems);
    if (Date.now() > until) throw new CliError('the daemon did not start within 15 s (see the log)', EXIT.problems);
    await systemClock.sleep(50);
  }
}

/** The daemon's own stdout is not wanted on the demo's screen (its log goes to a file). */
function nullStream(): CliIo['stdout'] {
  return new Writable({ write: (_chunk, _enc, done) => done() });
}
