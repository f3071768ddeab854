import { normalisePhone } from '../leads/phone.js';
import { forgetNumber, LiveCallError, scrubFreedSpace, type ForgetReport } from '../store/results-forget.js';
import { systemClock } from '../time/clock.js';
import { parseCommandArgs } from './args.js';
import { CliError, EXIT, type CliIo } from './io.js';
import { openWriteStore } from './open-store.js';

export const FORGET_HELP = `Usage: campaignd forget PHONE_NUMBER [--keep-calling] [--config FILE] [--json]

Erases the personal data of PHONE_NUMBER (E.164, e.g. +4915112345678) from the
database: the number itself wherever a lead, contact or attempt holds it, the variables
of every lead it belongs to, transcripts, recording URLs, extracted variables and
evaluations of their calls, and the details of their events. The counts stay: leads,
attempts and results remain as anonymous rows, and a lead still to be called becomes
suppressed. The number is then added to the suppression list (so it is never called
again) unless --keep-calling. Finally the database file is rewritten (VACUUM) so that
the erased bytes do not linger in its free space: best with the daemon stopped.

Options:
  --keep-calling  do not add the number to the suppression list
  --config FILE   daemon config (default: $CAMPAIGND_CONFIG, then ./config/campaignd.yaml)
  --json          the report as one JSON document
  -h, --help      this help

Exit status: 0 erased; 1 a call to the number is in progress (nothing erased), or the
file could not be rewritten (the data is erased from every table; run again with the
daemon stopped); 2 bad usage; 3 the database is newer than this campaignd.
`;

/** \`campaignd forget PHONE_NUMBER [--keep-calling] [--config FILE]\`. */
export async function forgetCommand(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandArgs(
    {
      args,
      allowPositionals: true,
      options: {
        config: { type: 'string' },
        'keep-calling': { type: 'boolean', default: false },
        json: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
    },
    FORGET_HELP,
  );
  if (values.help) {
    io.stdout.write(FORGET_HELP);
    return EXIT.ok;
  }
  if (positionals.length !== 1) throw new CliError('expected one PHONE_NUMBER (E.164, e.g. +4915112345678)', EXIT.usage);
  const parsed = normalisePhone(positionals[0]!);
  if (!parsed.ok) throw new CliError(`${JSON.stringify(positionals[0])} is not a phone number (${parsed.reason}): give it in E.164, e.g. +4915112345678`, EXIT.usage);
  const phone = parsed.e164;

  const store = await openWriteStore(values.config, io);
  try {
    let report: ForgetReport;
    try {
      report = await forgetNumber(store.db, phone, { now: systemClock.now(), keepCalling: values['keep-calling'] });
    } catch (err) {
      if (err instanceof LiveCallError) throw new CliError(err.message, EXIT.problems);
      throw err;
    }
    const scrub = await scrubFreedSpace(store.db);
    if (values.json) io.stdout.write(`${JSON.stringify({ phone_number: phone, ...report, file_rewritten: scrub.ok && scrub.rewritten, ...(scrub.detail ? { detail: scrub.detail } : {}) }, null, 2)}\n`);
    else io.stdout.write(describe(phone, report, scrub.ok, store.dialect === 'postgres'));
    if (!scrub.ok) io.stderr.write(`campaignd forget: ${scrub.detail}; the data is erased from every table, but its bytes may linger in the file's free space until "campaignd forget ${phone}" runs again with the daemon stopped\n`);
    return scrub.ok ? EXIT.ok : EXIT.problems;
  } finally {
    await store.close();
  }
}

function describe(phone: string, r: ForgetReport, rewritten: boolean, postgres: boolean): string {
  const lines = [
    `Erased ${phone}:`,
    `  leads           ${r.leads} (variables erased${r.leadsStopped > 0 ? `; ${r.leadsStopped} still to be called now suppressed` : ''})`,
    `  contacts        ${r.contacts} (where it was a lead's second or later number; numbers erased)`,
    `  attempts        ${r.attempts} (number erased)`,
    `  call results    ${r.results} (transcripts, recording URLs, extracted variables, evaluations)`,
    `  events          ${r.events} (details erased)`,
    `  hook events     ${r.hookEvents} undelivered (bodies erased, not sent)`,
    `  suppression     ${r.suppressed ? 'added: it will not be called again' : r.alreadySuppressed ? 'already on the list' : 'not added (--keep-calling)'}`,
    postgres
      ? '  database        PostgreSQL: rows overwritten and their old versions vacuumed; WAL archives and backups follow your retention'
      : `  database file   ${rewritten ? 'rewritten (no erased bytes left in free space or the log)' : 'NOT rewritten (see below)'}`,
  ];
  return `${lines.join('\n')}\n`;
}
