import os from 'node:os';
import { pidAlive } from '../lifecycle/daemon-row.js';
import { collectStatus, UnknownCampaignError } from '../status/collect.js';
import { statusProblems } from '../status/problems.js';
import { renderStatus } from '../status/render.js';
import type { StatusReport } from '../status/types.js';
import { systemClock, type Clock } from '../time/clock.js';
import { openReadStore } from './open-store.js';
import { parseCommandArgs } from './args.js';
import { CliError, EXIT, type CliIo } from './io.js';
import { version } from '../version.js';

export const STATUS_HELP = `Usage: campaignd status [CAMPAIGN] [--config FILE] [--json] [--watch]

Progress of every campaign (or of CAMPAIGN), read from the database: works while the
daemon runs and while it is down.

Options:
  --config FILE  daemon config (default: $CAMPAIGND_CONFIG, then ./config/campaignd.yaml);
                 only its "database" is used ($CAMPAIGND_DATABASE overrides)
  --json         one JSON document on stdout
  --watch        redraw every second until Ctrl-C
  -h, --help     this help

Exit status: 0 all fine; 1 a campaign has a problem, the token is rejected, or there is
no database yet; 2 bad usage or unknown CAMPAIGN; 3 the database is newer than this
campaignd.
`;

/** What the command reads from the outside world besides its io; tests pass their own. */
export interface StatusDeps {
  clock: Clock;
  isPidAlive: (pid: number) => boolean;
  hostname: string;
  /** Ends --watch (the command wires Ctrl-C to it when not given). */
  signal?: AbortSignal;
}

/** `campaignd status [CAMPAIGN] [--config FILE] [--json] [--watch]`. */
export async function statusCommand(args: string[], io: CliIo): Promise<number> {
  return runStatus(args, io, { clock: systemClock, isPidAlive: pidAlive, hostname: os.hostname() });
}

/** The command with its dependencies passed in. */
export async function runStatus(args: string[], io: CliIo, deps: StatusDeps): Promise<number> {
  const { values, positionals } = parseCommandArgs(
    {
      args,
      allowPositionals: true,
      options: {
        config: { type: 'string' },
        json: { type: 'boolean', default: false },
        watch: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
    },
    STATUS_HELP,
  );
  if (values.help) {
    io.stdout.write(STATUS_HELP);
    return EXIT.ok;
  }
  if (positionals.length > 1) throw new CliError(`expected at most one CAMPAIGN, got ${positionals.length}: ${positionals.join(' ')}`, EXIT.usage);
  const campaign = positionals[0];
  const handle = await openReadStore(values.config, io);
  try {
    const ver = await version();
    const take = (): Promise<StatusReport> =>
      collectStatus(handle.db, { now: deps.clock.now(), campaign, version: ver, isPidAlive: deps.isPidAlive, hostname: deps.hostname }).catch((err: unknown) => {
        if (err instanceof UnknownCampaignError) throw new CliError(err.message, EXIT.usage);
        throw err;
      });
    if (!values.watch) return show(await take(), io, values.json, deps.clock.now());
    return await watch(take, io, values.json, deps);
  } finally {
    await handle.close();
  }
}

/** Prints one report and gives the exit code monitoring relies on. */
function show(report: StatusReport, io: CliIo, json: boolean, now: number): number {
  io.stdout.write(json ? `${JSON.stringify(report, null, 2)}\n` : renderStatus(report, { now, color: useColour(io) }));
  return statusProblems(report).length > 0 ? EXIT.problems : EXIT.ok;
}

async function watch(take: () => Promise<StatusReport>, io: CliIo, json: boolean, deps: StatusDeps): Promise<number> {
  let signal = deps.signal;
  let stopWatching: (() => void) | undefined;
  if (!signal) {
    const controller = new AbortController();
    const onInt = (): void => controller.abort();
    process.once('SIGINT', onInt);
    stopWatching = () => process.off('SIGINT', onInt);
    signal = controller.signal;
  }
  const tty = !!io.stdout.isTTY;
  let code: number = EXIT.ok;
  try {
    while (!signal.aborted) {
      const report = await take();
      const now = deps.clock.now();
      if (json) {
        // One document per line, so that a pipe gets NDJSON.
        io.stdout.write(`${JSON.stringify(report)}\n`);
        code = statusProblems(report).length > 0 ? EXIT.problems : EXIT.ok;
      } else {
        // Home + clear: the table is redrawn in place rather than scrolling.
        if (tty) io.stdout.write('\u001b[H\u001b[2J');
        else io.stdout.write(`--- ${new Date(now).toISOString()}\n`);
        code = show(report, io, false, now);
        if (tty) io.stdout.write('\n(refreshing every second; Ctrl-C to stop)\n');
      }
      await deps.clock.sleep(1000, signal);
    }
  } finally {
    stopWatching?.();
  }
  return code;
}

/** Colour only on a terminal, and never when NO_COLOR is set. */
function useColour(io: CliIo): boolean {
  return !!io.stdout.isTTY && !io.env.NO_COLOR && io.env.TERM !== 'dumb';
}

