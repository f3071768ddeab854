// `campaignd leads import FILE --campaign NAME [--config FILE] [--json] [--dry-run] [--map …]`:
// loads a lead file (CSV or .xlsx, see src/leads/lead-table.ts) into the store. Safe while the daemon runs (WAL, one short transaction per batch) and
// safe to repeat (the import is idempotent). Exit 0 even when rows were invalid: they are
// stored as `invalid` leads and listed in the summary.
import fs from 'node:fs';
import path from 'node:path';
import type { CampaignConfig, LoadedConfig } from '../config/types.js';
import { ColumnError, mergeColumns, parseMapOption, type LeadColumns } from '../leads/columns.js';
import { parseDelimiter } from '../leads/delimiter.js';
import { ENCODINGS, parseEncoding } from '../leads/encoding.js';
import { importLeadFile, type LeadFileImported } from '../leads/import-file.js';
import { renderSummary } from '../leads/import-summary.js';
import type { TableOptions } from '../leads/lead-table.js';
import { LeadFileError, type ReadLeadResult } from '../leads/read-leads.js';
import { getCampaignByName, upsertCampaign } from '../store/campaigns.js';
import { openDatabase, type DatabaseHandle } from '../store/database.js';
import { describeTarget, isPostgresUrl } from '../store/database-url.js';
import { isMissingDatabase } from '../store/open-store.js';
import { assertSchemaKnown, migrateToLatest, schemaStatus } from '../store/migrate.js';
import { readSuppressionFile } from '../leads/suppression-file.js';
import { suppressionsAfterSync, syncSuppressions } from '../store/suppressions.js';
import { systemClock } from '../time/clock.js';
import { parseCommandArgs } from './args.js';
import { loadCommandConfig } from './command-config.js';
import { CliError, EXIT, type CliIo } from './io.js';
import { openStoreReadonly, openWriteStore, storeOpenError } from './open-store.js';
import { countLines, createProgressBar } from '../leads/progress.js';

export const LEADS_HELP = `Usage: campaignd leads import FILE --campaign NAME [--config FILE] [--dry-run] [--json]
                             [--map FIELD=COLUMN,...] [--delimiter D] [--encoding E] [--sheet NAME]

Loads a lead file (CSV or .xlsx) into the store for campaign NAME. The same number twice
is one lead (unless the campaign sets allow_duplicates); importing the same file again
adds nothing twice and updates the variables of leads not yet called. Rows with a bad
number are kept as "invalid" leads and counted by reason. Numbers on the
suppression_file are stored as "suppressed". Safe while the daemon runs.

The file as people have it: the delimiter (comma, semicolon, tab, pipe) is read from
the header row and the encoding (UTF-8 with or without BOM, UTF-16 with BOM,
Windows-1252) from the bytes; .xlsx workbooks are read from their first sheet. The
phone number column may be called phone_number or a common name (Phone, Telefon,
Mobile, Handy, Tel, Numéro …; timezone: TZ, Zeitzone …; country: Land, Pays …); the
summary says which column was taken for what.

Options:
  --campaign NAME    the campaign (as named in its campaign file)
  --config FILE      daemon config (default: $CAMPAIGND_CONFIG, then ./config/campaignd.yaml)
  --dry-run          print what would be imported (counts, invalid rows and why, the column
                     mapping, the first rows as parsed) and write nothing; the counts are
                     the import's (stored leads and the whole suppression list included)
  --map MAPPING      which header holds what, for this import (on top of the campaign's
                     lead_columns): comma-separated FIELD=COLUMN, FIELD one of
                       phone_number=COLUMN  timezone=COLUMN  country=COLUMN
                       secondary_phone_numbers=COLUMN|COLUMN…  (called in that order)
                       variables.NAME=COLUMN  (the column passed to make_call as NAME)
                     e.g. --map "phone_number=Telefon,secondary_phone_numbers=Handy|Büro,variables.first_name=Vorname"
                     Headers are matched ignoring case and accents; a header containing
                     "," "|" or "=" is named in the campaign file's lead_columns instead.
  --delimiter D      comma, semicolon, tab or pipe (or the character): skip detection
  --encoding E       utf-8, utf-16le, utf-16be or windows-1252: skip detection
  --sheet NAME       the .xlsx sheet to read (default: the first)
  --json             print the summary as one JSON document
  -h, --help         this help

Exit status: 0 imported (even with invalid rows), or dry run done; 1 unknown or broken
campaign, or the file cannot be read as a lead file; 2 bad usage or unreadable config;
3 the database is newer than this campaignd.
`;

/** Rows shown as parsed by --dry-run. */
const PREVIEW_ROWS = 5;

interface ImportRequest {
  file: string;
  json: boolean;
  dryRun: boolean;
  columns?: LeadColumns;
  columnsSource?: string;
  table: TableOptions;
}

/** The `leads` command (sub-command `import`). */
export async function leadsCommand(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandArgs(
    {
      args,
      options: {
        campaign: { type: 'string' },
        config: { type: 'string', short: 'c' },
        json: { type: 'boolean' },
        'dry-run': { type: 'boolean' },
        map: { type: 'string', multiple: true },
        delimiter: { type: 'string' },
        encoding: { type: 'string' },
        sheet: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      allowPositionals: true,
    },
    LEADS_HELP,
  );
  if (values.help) {
    io.stdout.write(LEADS_HELP);
    return EXIT.ok;
  }
  const [sub, fileArg, ...extra] = positionals;
  if (sub !== 'import') throw new CliError(`${sub ? `unknown sub-command "${sub}"` : 'missing sub-command'}: use "campaignd leads import FILE --campaign NAME"`, EXIT.usage);
  if (!fileArg || extra.length > 0) throw new CliError('give exactly one FILE: campaignd leads import FILE --campaign NAME', EXIT.usage);
  if (!values.campaign) throw new CliError('--campaign NAME is required', EXIT.usage);
  const table: TableOptions = {};
  if (values.delimiter !== undefined) {
    const d = parseDelimiter(values.delimiter);
    if (!d) throw new CliError(`--delimiter "${values.delimiter}" is not one of comma, semicolon, tab, pipe`, EXIT.usage);
    table.delimiter = d;
  }
  if (values.encoding !== undefined) {
    const e = parseEncoding(values.encoding);
    if (!e) throw new CliError(`--encoding "${values.encoding}" is not one of ${ENCODINGS.join(', ')}`, EXIT.usage);
    table.encoding = e;
  }
  if (values.sheet !== undefined) table.sheet = values.sheet;
  let map: LeadColumns | undefined;
  try {
    map = values.map ? parseMapOption(values.map) : undefined;
  } catch (err) {
    if (err instanceof ColumnError) throw new CliError(err.message, EXIT.usage);
    throw err;
  }

  const file = path.resolve(io.cwd, fileArg);
  if (!fs.existsSync(file)) throw new CliError(`lead file ${fileArg} does not exist`, EXIT.problems);

  const loaded = await loadCommandConfig(values.config, io);
  const cfg = findCampaign(loaded, values.campaign);
  const columns = mergeColumns(cfg.leadColumns, map);
  const request: ImportRequest = { file, json: !!values.json, dryRun: !!values['dry-run'], table };
  if (columns) {
    request.columns = columns;
    request.columnsSource = map ? (cfg.leadColumns ? `--map and lead_columns in ${cfg.file}` : '--map') : `lead_columns in ${cfg.file}`;
  }
  return runImport(io, loaded, cfg, request);
}

function findCampaign(loaded: LoadedConfig, name: string): CampaignConfig {
  const cfg = loaded.campaigns.find((c) => c.name === name);
  if (cfg) return cfg;
  const broken = loaded.brokenCampaigns.find((b) => b.name === name);
  if (broken) throw new CliError(`campaign "${name}" (${broken.file}) has problems: run "campaignd validate" to see them`, EXIT.problems);
  const known = loaded.campaigns.map((c) => c.name);
  throw new CliError(`unknown campaign "${name}"; known: ${known.length > 0 ? known.join(', ') : `none (no campaign files in ${loaded.daemon.campaignsDir})`}`, EXIT.problems);
}

async function runImport(io: CliIo, loaded: LoadedConfig, cfg: CampaignConfig, req: ImportRequest): Promise<number> {
  const clock = systemClock;
  const { file } = req;
  const store = await openImportStore(loaded, cfg, req.dryRun, clock.now(), io);
  const { handle } = store;
  try {
    const dncFile = loaded.daemon.suppressionFile;
    const fileNumbers = dncFile && fs.existsSync(dncFile) ? (await readSuppressionFile(dncFile)).numbers : undefined;
    // An import brings the store's list in line with the file first; a dry run judges rows
    // by the list that would leave (the store's own entries, `suppress add` and opt-outs, too).
    let suppressed: ReadonlySet<string> | undefined;
    if (req.dryRun) suppressed = await suppressionsAfterSync(handle.db, fileNumbers);
    else if (fileNumbers) await syncSuppressions(handle.db, fileNumbers, clock.now());

    const preview: ReadLeadResult[] = [];
    const bar = io.stderr.isTTY ? createProgressBar(io.stderr, path.basename(file), await countRows(file), clock) : undefined;
    let imported: LeadFileImported;
    try {
      imported = await importLeadFile(handle.db, {
        file,
        sourceFile: file,
        campaign: { id: store.campaignId, allowDuplicates: cfg.allowDuplicates, ...(cfg.defaultCountry ? { defaultCountry: cfg.defaultCountry } : {}) },
        read: { ...req.table, ...(req.columns ? { columns: req.columns } : {}), ...(req.columnsSource ? { columnsSource: req.columnsSource } : {}) },
        clock,
        dryRun: req.dryRun,
        onRow: (row) => {
          if (preview.length < PREVIEW_ROWS) preview.push(row);
        },
        options: {
          parallelWrites: isPostgresUrl(loaded.daemon.database) ? IMPORT_WRITERS : 1,
          ...(suppressed ? { suppressed } : {}),
          ...(bar ? { onProgress: bar.update } : {}),
        },
      });
    } catch (err) {
      if (err instanceof LeadFileError) throw new CliError(err.message, EXIT.problems);
      throw err;
    } finally {
      bar?.done();
    }
    const { summary, layout } = imported;

    if (req.json) {
      const doc: Record<string, unknown> = { campaign: cfg.name, file, dryRun: req.dryRun, ...summary };
      if (layout) Object.assign(doc, { format: layout.format, columns: layout.columns });
      if (req.dryRun) doc.preview = preview;
      if (store.note) doc.note = store.note;
      io.stdout.write(`${JSON.stringify(doc, null, 2)}\n`);
    } else {
      io.stdout.write(renderSummary({ campaign: cfg.name, shownFile: path.relative(io.cwd, file) || file, summary, layout, dryRun: req.dryRun, preview, note: store.note }));
    }
    return EXIT.ok;
  } finally {
    await handle.close();
  }
}

/** The store an import writes to, or a dry run only reads. */
/**
 * Batches written side by side on PostgreSQL, each by a server process of its own, while
 * the next is read: one connection left the server idle while the command parsed rows, and
 * the command idle while the server checked and indexed them (half the goal of issue 12's
 * 50k rows/s). SQLite has one writer whatever we do.
 */
const IMPORT_WRITERS = 2;

interface ImportStore {
  handle: DatabaseHandle;
  campaignId: number;
  /** Why a dry run could not compare with the store (printed with the summary). */
  note?: string;
}

async function openImportStore(loaded: LoadedConfig, cfg: CampaignConfig, dryRun: boolean, now: number, io: CliIo): Promise<ImportStore> {
  const clock = systemClock;
  if (!dryRun) {
    // Two connections on PostgreSQL: one batch is written on each (IMPORT_WRITERS).
    const handle = await openWriteStore(loaded.daemon, io, { maxConnections: IMPORT_WRITERS });
    try {
      const existing = await getCampaignByName(handle.db, cfg.name);
      // Offline the assistant's zone is unknown: keep whatever the daemon resolved before.
      const campaign = await upsertCampaign(handle.db, cfg, { timezone: cfg.timezone ?? existing?.timezone ?? null }, now);
      return { handle, campaignId: campaign.id };
    } catch (err) {
      await handle.close();
      throw err;
    }
  }
  // A dry run never writes: the store is opened read-only, and when there is none yet
  // (or its schema still needs migrating) rows are judged against an empty one in memory.
  const file = loaded.daemon.database;
  const shown = describeTarget(file);
  const postgres = isPostgresUrl(file);
  let exists = postgres || (file !== ':memory:' && fs.existsSync(file));
  if (exists) {
    const handle = await openStoreReadonly(loaded.daemon, io);
    const status = await schemaStatus(handle.db).catch(async (err: unknown) => {
      await handle.close();
      if (postgres && isMissingDatabase(err)) return null;
      throw err;
    });
    if (status === null) {
      exists = false;
    } else {
      try {
        assertSchemaKnown(status);
      } catch (err) {
        await handle.close();
        throw storeOpenError(err, shown);
      }
      if (status.pending.length === 0) {
        const campaign = await getCampaignByName(handle.db, cfg.name);
        // No campaign row yet: an id no lead has, so every row counts as new.
        return { handle, campaignId: campaign?.id ?? -1 };
      }
      await handle.close();
    }
  }
  const handle = openDatabase(':memory:');
  await migrateToLatest(handle.db, { clock });
  const campaign = await upsertCampaign(handle.db, cfg, { timezone: cfg.timezone ?? null }, now);
  const note = exists ? 'the store was not read (its schema needs the upgrade a real import does): every row is counted as new' : undefined;
  return note ? { handle, campaignId: campaign.id, note } : { handle, campaignId: campaign.id };
}

/** Rows for the progress bar: lines of a text file; unknown (0) for a workbook. */
async function countRows(file: string): Promise<number> {
  return /\.xls[xm]$/i.test(file) ? 0 : countLines(file);
}
