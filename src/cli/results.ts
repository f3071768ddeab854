import { drained } from '../http/drained.js';
import fs from 'node:fs';
import path from 'node:path';
import { once } from 'node:events';
import { exportResults, type ExportFormat } from '../results/export.js';
import { exportCampaigns } from '../store/results-export.js';
import { hasMigration } from '../store/migrate.js';
import { openReadStore } from './open-store.js';
import { parseCommandArgs } from './args.js';
import { CliError, EXIT, type CliIo } from './io.js';

export const RESULTS_HELP = `Usage: campaignd results [CAMPAIGN] [--format csv|jsonl] [--no-bom] [--output FILE] [--since ISO] [--config FILE]

What the calls produced, one record per lead (every campaign, or CAMPAIGN), read from
the database: works while the daemon runs.

Columns: campaign, lead_id, phone_number (the contact reached or last tried), state,
state_reason, attempts, last_outcome, last_call_status, answered_by, duration_seconds,
started_at, ended_at, cost, recording_url, the lead's own CSV columns (lead.NAME when
the name is one of these), and extracted.NAME for every variable the assistant
extracted in the campaign. JSONL adds variables, extracted, evaluation, the transcript
and attempt_history (every attempt with its call).

Options:
  --format csv|jsonl  default csv: RFC 4180, UTF-8 with a byte order mark so that
                      spreadsheets (Excel included) read non-ASCII text right
  --no-bom            CSV without the byte order mark (for tools that do not expect one)
  --output FILE       write to FILE (created readable by its owner only: it holds
                      personal data) instead of stdout
  --since ISO         only leads changed at or after this instant (2026-11-01 or
                      2026-11-01T09:00:00Z)
  --config FILE       daemon config (default: $CAMPAIGND_CONFIG, then ./config/campaignd.yaml)
  -h, --help          this help

Exit status: 0 written; 1 no database; 2 bad usage or unknown CAMPAIGN; 3 the database
is newer than this campaignd.
`;

/** \`campaignd results [CAMPAIGN] [--format csv|jsonl] [--output FILE] [--since ISO] [--config FILE]\`. */
export async function resultsCommand(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandArgs(
    {
      args,
      allowPositionals: true,
      options: {
        config: { type: 'string' },
        format: { type: 'string', default: 'csv' },
        output: { type: 'string' },
        since: { type: 'string' },
        'no-bom': { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
    },
    RESULTS_HELP,
  );
  if (values.help) {
    io.stdout.write(RESULTS_HELP);
    return EXIT.ok;
  }
  if (positionals.length > 1) throw new CliError(`expected at most one CAMPAIGN, got ${positionals.length}: ${positionals.join(' ')}`, EXIT.usage);
  const format = values.format as ExportFormat;
  if (format !== 'csv' && format !== 'jsonl') throw new CliError(`--format ${values.format}: use csv or jsonl`, EXIT.usage);
  const since = values.since === undefined ? undefined : parseSince(values.since);

  const handle = await openReadStore(values.config, io);
  try {
    if (!(await hasMigration(handle.db, '0004_call_results'))) {
      throw new CliError(`the database at ${handle.file} predates call results: start "campaignd run" once with this version to upgrade it`, EXIT.problems);
    }
    const campaigns = await exportCampaigns(handle.db, positionals[0]);
    if (positionals[0] !== undefined && campaigns.length === 0) throw new CliError(`no campaign named "${positionals[0]}" in ${handle.file}`, EXIT.usage);
    const out = values.output === undefined ? null : openOutput(path.resolve(io.cwd, values.output));
    const stream: NodeJS.WritableStream = out ?? io.stdout;
    let failed: Error | null = null;
    stream.on('error', (err: Error) => (failed = err));
    const sink = async (text: string): Promise<void> => {
      if (failed) throw failed;
      if (!stream.write(text)) await drained(stream);
    };
    try {
      const { leads } = await exportResults(
        handle.db,
        {
          format,
          scope: { campaignIds: positionals[0] === undefined ? undefined : campaigns.map((c) => c.id), since },
          campaignNames: new Map(campaigns.map((c) => [c.id, c.name])),
          bom: !values['no-bom'],
        },
        sink,
      );
      if (out) {
        out.end();
        await once(out, 'finish');
      }
      if (failed) throw failed;
      io.stderr.write(`campaignd results: ${leads} lead${leads === 1 ? '' : 's'} of ${campaigns.length} campaign${campaigns.length === 1 ? '' : 's'} written${values.output ? ` to ${values.output}` : ''} (${format})\n`);
      return EXIT.ok;
    } catch (err) {
      out?.destroy();
      const code = (err as NodeJS.ErrnoException).code;
      // A reader that went away (| head) is not an error of ours.
      if (code === 'EPIPE') return EXIT.ok;
      if (err instanceof CliError) throw err;
      if (code) throw new CliError(`cannot write ${values.output ?? 'stdout'}: ${(err as Error).message}`, EXIT.problems);
      throw err;
    }
  } finally {
    await handle.close();
  }
}

function openOutput(file: string): fs.WriteStream {
  try {
    // 0600: the export holds names, numbers and what people said.
    const fd = fs.openSync(file, 'w', 0o600);
    return fs.createWriteStream(file, { fd });
  } catch (err) {
    throw new CliError(`cannot write ${file}: ${(err as Error).message}`, EXIT.usage);
  }
}

/** --since: an ISO date or instant; a date alone is midnight UTC. */
function parseSince(text: string): number {
  const ms = Date.parse(/^\d{4}-\d{2}-\d{2}$/.test(text) ? `${text}T00:00:00Z` : text);
  if (!Number.isFinite(ms) || !/^\d{4}-\d{2}-\d{2}/.test(text)) {
    throw new CliError(`--since ${JSON.stringify(text)} is not an ISO date or instant: use e.g. 2026-11-01 or 2026-11-01T09:00:00Z`, EXIT.usage);
  }
  return ms;
}
