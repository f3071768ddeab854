// `campaignd leads import FILE --campaign NAME [--config FILE] [--json]`: loads a lead CSV
// into the store. Safe while the daemon runs (WAL, one short transaction per batch) and
// safe to repeat (the import is idempotent). Exit 0 even when rows were invalid: they are
// stored as `invalid` leads and listed in the summary.
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { formatProblems } from '../config/format.js';
import { ConfigUnreadableError, loadConfig } from '../config/load.js';
import type { CampaignConfig, LoadedConfig } from '../config/types.js';
import { importLeads, type ImportSummary } from '../leads/import.js';
import { LeadFileError, readLeadCsv } from '../leads/read-leads.js';
import { getCampaignByName, upsertCampaign } from '../store/campaigns.js';
import { openDatabase } from '../store/database.js';
import { recordEvent } from '../store/events.js';
import { migrateToLatest, NewerSchemaError } from '../store/migrate.js';
import { readSuppressionFile, suppressPendingLeads, syncSuppressions } from '../store/suppressions.js';
import { systemClock } from '../time/clock.js';
import { resolveConfigPath } from './config-path.js';
import { CliError, EXIT, type CliIo } from './io.js';
import { countLines, createProgressBar } from '../leads/progress.js';

export const LEADS_HELP = `Usage: campaignd leads import FILE --campaign NAME [--config FILE] [--json]

Loads a lead CSV into the store for campaign NAME. The same number twice is one lead
(unless the campaign sets allow_duplicates); importing the same file again adds nothing
twice and updates the variables of leads not yet called. Rows with a bad number are kept
as "invalid" leads and counted by reason. Numbers on the suppression_file are stored as
"suppressed". Safe while the daemon runs.

Options:
  --campaign NAME  the campaign (as named in its campaign file)
  --config FILE    daemon config (default: $CAMPAIGND_CONFIG, then ./config/campaignd.yaml)
  --json           print the summary as one JSON document
  -h, --help       this help

Exit status: 0 imported (even with invalid rows); 1 unknown or broken campaign, or the
file cannot be read as a lead CSV; 2 bad usage or unreadable config; 3 the database is
newer than this campaignd.
`;

/** The `leads` command (sub-command `import`). */
export async function leadsCommand(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    options: { campaign: { type: 'string' }, config: { type: 'string', short: 'c' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
    strict: true,
    allowPositionals: true,
  });
  if (values.help) {
    io.stdout.write(LEADS_HELP);
    return EXIT.ok;
  }
  const [sub, fileArg, ...extra] = positionals;
  if (sub !== 'import') throw new CliError(`${sub ? `unknown sub-command "${sub}"` : 'missing sub-command'}: use "campaignd leads import FILE --campaign NAME"`, EXIT.usage);
  if (!fileArg || extra.length > 0) throw new CliError('give exactly one FILE: campaignd leads import FILE --campaign NAME', EXIT.usage);
  if (!values.campaign) throw new CliError('--campaign NAME is required', EXIT.usage);

  const file = path.resolve(io.cwd, fileArg);
  if (!fs.existsSync(file)) throw new CliError(`lead file ${fileArg} does not exist`, EXIT.problems);

  const loaded = await readConfig(resolveConfigPath(values.config, io), io);
  const cfg = findCampaign(loaded, values.campaign);
  return runImport(io, loaded, cfg, file, !!values.json);
}

async function readConfig(configPath: string, io: CliIo): Promise<LoadedConfig> {
  try {
    return await loadConfig(configPath, io.env, { cwd: io.cwd });
  } catch (err) {
    if (!(err instanceof ConfigUnreadableError)) throw err;
    io.stderr.write(`${formatProblems(err.problems, { cwd: io.cwd })}\n`);
    throw new CliError('the config cannot be read', EXIT.usage);
  }
}

function findCampaign(loaded: LoadedConfig, name: string): CampaignConfig {
  const cfg = loaded.campaigns.find((c) => c.name === name);
  if (cfg) return cfg;
  const broken = loaded.brokenCampaigns.find((b) => b.name === name);
  if (broken) throw new CliError(`campaign "${name}" (${broken.file}) has problems: run "campaignd validate" to see them`, EXIT.problems);
  const known = loaded.campaigns.map((c) => c.name);
  throw new CliError(`unknown campaign "${name}"; known: ${known.length > 0 ? known.join(', ') : `none (no campaign files in ${loaded.daemon.campaignsDir})`}`, EXIT.problems);
}

async function runImport(io: CliIo, loaded: LoadedConfig, cfg: CampaignConfig, file: string, json: boolean): Promise<number> {
  const clock = systemClock;
  const handle = openDatabase(loaded.daemon.database);
  try {
    try {
      await migrateToLatest(handle.db, { clock });
    } catch (err) {
      if (err instanceof NewerSchemaError) throw new CliError(err.message, EXIT.database);
      throw err;
    }
    const existing = await getCampaignByName(handle.db, cfg.name);
    // Offline the assistant's zone is unknown: keep whatever the daemon resolved before.
    const campaign = await upsertCampaign(handle.db, cfg, { timezone: cfg.timezone ?? existing?.timezone ?? null }, clock.now());

    if (loaded.daemon.suppressionFile && fs.existsSync(loaded.daemon.suppressionFile)) {
      const dnc = await readSuppressionFile(loaded.daemon.suppressionFile);
      await syncSuppressions(handle.db, dnc.numbers, clock.now());
    }

    const bar = io.stderr.isTTY ? createProgressBar(io.stderr, path.basename(file), await countLines(file), clock) : undefined;
    let summary: ImportSummary;
    try {
      summary = await importLeads(
        handle.db,
        { id: campaign.id, allowDuplicates: cfg.allowDuplicates, ...(cfg.defaultCountry ? { defaultCountry: cfg.defaultCountry } : {}) },
        readLeadCsv(file, { ...(cfg.defaultCountry ? { defaultCountry: cfg.defaultCountry } : {}), allowDuplicates: cfg.allowDuplicates }),
        { now: clock.now(), sourceFile: file, ...(bar ? { onProgress: bar.update } : {}) },
      );
    } catch (err) {
      if (err instanceof LeadFileError) throw new CliError(err.message, EXIT.problems);
      throw err;
    } finally {
      bar?.done();
    }
    await suppressPendingLeads(handle.db, clock.now(), { campaignId: campaign.id });
    await recordEvent(handle.db, { at: clock.now(), campaignId: campaign.id, kind: 'leads-imported', data: { file, ...summary, samples: undefined } });

    io.stdout.write(json ? `${JSON.stringify({ campaign: cfg.name, file, ...summary }, null, 2)}\n` : renderSummary(cfg.name, file, summary, io.cwd));
    return EXIT.ok;
  } finally {
    await handle.close();
  }
}

/** The human summary: counts, invalid rows by reason, and the first problem rows. */
function renderSummary(campaign: string, file: string, s: ImportSummary, cwd: string): string {
  const n = (x: number): string => x.toLocaleString('en').padStart(9);
  const lines = [
    `Imported ${path.relative(cwd, file) || file} into campaign "${campaign}": ${s.read.toLocaleString('en')} rows`,
    `${n(s.accepted)}  accepted (new leads)`,
    `${n(s.updated)}  updated (pending leads with changed data)`,
    `${n(s.unchanged)}  unchanged (already imported)`,
    `${n(s.duplicates)}  duplicates (number seen earlier in the file)`,
    `${n(s.suppressed)}  suppressed (on the do-not-call list)`,
    `${n(s.invalid)}  invalid`,
  ];
  const reasons = Object.entries(s.invalidByReason).sort((a, b) => b[1] - a[1]);
  for (const [reason, count] of reasons) lines.push(`${' '.repeat(11)}${count.toLocaleString('en').padStart(7)}  ${reason}`);
  if (s.warnings > 0) lines.push(`${n(s.warnings)}  secondary numbers skipped`);
  if (s.samples.length > 0) {
    lines.push('First problem rows:');
    for (const { line, message } of s.samples.slice(0, 10)) lines.push(`  line ${line}: ${message}`);
  }
  return `${lines.join('\n')}\n`;
}
