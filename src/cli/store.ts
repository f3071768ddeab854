import fs from 'node:fs';
import path from 'node:path';
import type { DatabaseHandle } from '../store/database.js';
import { copyStore, TargetNotEmptyError, type CopyProgress } from '../store/copy.js';
import { HEARTBEAT_STALE_MS } from '../lifecycle/daemon-row.js';
import { liveDaemonRows } from '../store/daemons.js';
import { describeTarget } from '../store/open-store.js';
import { isPostgresUrl, redactUrls } from '../store/dialect.js';
import { systemClock } from '../time/clock.js';
import { parseCommandArgs } from './args.js';
import { CliError, EXIT, type CliIo } from './io.js';
import { openWriteStore } from './open-store.js';

export const STORE_HELP = `Usage: campaignd store copy --from DATABASE --to DATABASE [--json]

Copies a whole campaignd store into an empty one: typically an existing SQLite file into
a new PostgreSQL database (README, "PostgreSQL and failover"), e.g.

  systemctl stop campaignd
  PGPASSWORD=… campaignd store copy --from /var/lib/campaignd/campaignd.db --to postgres://campaignd@db:5432/campaignd
  # set database: postgres://campaignd@db:5432/campaignd in campaignd.yaml, then
  systemctl start campaignd

DATABASE is a SQLite file or a postgres:// URL (the password from PGPASSWORD, never in
the URL). Both are first brought to this campaignd's schema. The copy is one
transaction: the target holds everything or nothing, and every table's row count is
checked before it commits. The source must not be in use by a running daemon, and the
target must hold no campaignd data yet.

Options:
  --from DATABASE  the store to read (left unchanged apart from its schema upgrade)
  --to DATABASE    the empty store to fill
  --json           the rows copied per table, as one JSON document
  -h, --help       this help

Exit status: 0 copied; 1 the source is in use, the target is not empty, or the copy failed
(nothing written); 2 bad usage; 3 a database is newer than this campaignd.
`;

/** `campaignd store copy --from A --to B`. */
export async function storeCommand(args: string[], io: CliIo): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === undefined || sub === '--help' || sub === '-h') {
    io.stdout.write(STORE_HELP);
    return sub === undefined ? EXIT.usage : EXIT.ok;
  }
  if (sub !== 'copy') throw new CliError(`unknown subcommand "${sub}": the store command has "copy"`, EXIT.usage);
  const { values } = parseCommandArgs(
    {
      args: rest,
      options: {
        from: { type: 'string' },
        to: { type: 'string' },
        json: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
    },
    STORE_HELP,
  );
  if (values.help) {
    io.stdout.write(STORE_HELP);
    return EXIT.ok;
  }
  if (!values.from || !values.to) throw new CliError('both --from DATABASE and --to DATABASE are needed', EXIT.usage);
  const at = (t: string) => (isPostgresUrl(t) ? t : path.resolve(io.cwd, t));
  values.from = at(values.from);
  values.to = at(values.to);
  if (values.from === values.to) throw new CliError('--from and --to name the same database', EXIT.usage);

  const from = await open(values.from, 'source', io);
  try {
    const to = await open(values.to, 'target', io);
    try {
      await refuseRunningDaemon(from, values.from);
      const started = systemClock.now();
      let copied: CopyProgress[];
      try {
        copied = await copyStore(from.db, to.db);
      } catch (err) {
        if (err instanceof TargetNotEmptyError) throw new CliError(`${describeTarget(values.to)}: ${err.message}`, EXIT.problems);
        throw new CliError(`the copy failed and nothing was written: ${redactUrls(err instanceof Error ? err.message : String(err))}`, EXIT.problems);
      }
      const seconds = (systemClock.now() - started) / 1000;
      if (values.json) {
        io.stdout.write(`${JSON.stringify({ from: describeTarget(values.from), to: describeTarget(values.to), seconds, tables: Object.fromEntries(copied.map((c) => [c.table, c.rows])) }, null, 2)}\n`);
      } else {
        const width = Math.max(...copied.map((c) => c.table.length));
        io.stdout.write(
          `Copied ${describeTarget(values.from)} into ${describeTarget(values.to)} in ${seconds.toFixed(1)} s:\n${copied.map((c) => `  ${c.table.padEnd(width)}  ${c.rows}`).join('\n')}\nPoint the daemon config's "database" at ${describeTarget(values.to)} and start it.\n`,
        );
      }
      return EXIT.ok;
    } finally {
      await to.close();
    }
  } finally {
    await from.close();
  }
}

async function open(target: string, role: 'source' | 'target', io: CliIo): Promise<DatabaseHandle> {
  // Opening a SQLite file creates it: a mistyped source must not become an empty store.
  if (role === 'source' && !isPostgresUrl(target) && !fs.existsSync(target)) throw new CliError(`the source ${target} does not exist`, EXIT.problems);
  try {
    return await openWriteStore({ database: target }, io, { missing: role === 'target' ? 'create the PostgreSQL database first (createdb)' : 'check the URL' });
  } catch (err) {
    if (err instanceof CliError) throw new CliError(`the ${role} (--${role === 'source' ? 'from' : 'to'}): ${err.message}`, err.exitCode);
    throw err;
  }
}

/** A daemon still writing the source would leave the copy behind at once. */
async function refuseRunningDaemon(from: DatabaseHandle, target: string): Promise<void> {
  const now = systemClock.now();
  const [live] = await liveDaemonRows(from.db, now - HEARTBEAT_STALE_MS);
  if (live) throw new CliError(`a daemon (pid ${live.pid} on ${live.hostname}) is running on ${describeTarget(target)}: stop it first, so that nothing changes during the copy`, EXIT.problems);
}
