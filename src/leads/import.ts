import type { Kysely } from 'kysely';
import { REFRESH_AFTER_ROWS, refreshStatistics } from '../store/planner-statistics.js';
import { defaultImportBatchRows, leadBatchWriter, type LeadBatchWriter } from '../store/lead-batch.js';
import { readImportPrior, type ImportPrior } from '../store/lead-import.js';
import type { Database } from '../store/types.js';
import { RowScreen, writeRows, type PlannedRow, type RowCampaign, type RowWriteOptions } from './import-rows.js';
import type { ReadLeadResult } from './read-leads.js';
import { Turns, WriteWindow } from './write-window.js';

// Lead import: rows arrive as a stream and are written in batches, one transaction per
// batch (src/store/lead-batch.ts: multi-row inserts on SQLite, COPY on PostgreSQL), so that
// a million rows load in seconds and a crash loses at most one batch (re-running the
// import finishes the job: it is idempotent). What each row becomes is decided in
// import-rows.ts, the same rules the API's items go by (import-items.ts); the queries are
// the store's (lead-import.ts, lead-batch.ts, suppressions.ts).
//
// Counting: every row read lands in exactly one of accepted, updated, unchanged,
// duplicates, invalid or suppressed.
// A dry run goes the same way, reading where the import would write, so that its counts
// are the import's.

/** What an import did, row by row. */
export interface ImportSummary {
  read: number;
  /** New leads, ready to call. */
  accepted: number;
  /** Existing pending leads whose variables, timezone or secondary numbers changed. */
  updated: number;
  /** Existing leads left as they were. */
  unchanged: number;
  /** Rows repeating a number seen earlier in this file. */
  duplicates: number;
  /** Rows with a bad number or timezone (stored as `invalid` leads). */
  invalid: number;
  invalidByReason: Record<string, number>;
  /** New leads whose number is on the do-not-call list (stored as `suppressed`). */
  suppressed: number;
  /** Secondary numbers skipped (bad or repeated). */
  warnings: number;
  /** The first problem rows in file order: invalid ones with their reason, duplicates with the line they repeat, skipped secondary numbers. */
  samples: { line: number; message: string }[];
}

export interface ImportCampaign {
  id: number;
  allowDuplicates: boolean;
  defaultCountry?: string;
}

export interface ImportOptions {
  now: number;
  /** Names the rows in dedupe keys and in `source_file`; pass the same path on every import. */
  sourceFile: string;
  /** Called after each batch with the number of rows read so far. */
  onProgress?: (rowsRead: number) => void;
  /** Rows per transaction (default: the store's, defaultImportBatchRows: 2000 on SQLite, 5000 on PostgreSQL). */
  batchSize?: number;
  /**
   * Count what the import would do and write nothing (`leads import --dry-run`): the
   * store is only read, to tell new leads from updated and unchanged ones.
   */
  dryRun?: boolean;
  /**
   * The do-not-call numbers to judge rows by, instead of the store's list: a dry run passes
   * the list as the import would find it once it has synced the suppression file.
   */
  suppressed?: ReadonlySet<string>;
  /**
   * Batches written at once (default 1). `leads import` on PostgreSQL passes 2, on a pool
   * of two connections: each batch's rows are then checked and indexed by a server process
   * of its own while the command reads the next batch (issue 12: ≥ 50k rows/s).
   */
  parallelWrites?: number;
}

const MAX_SAMPLES = 20;

/** Imports lead rows into one campaign; idempotent for the same file. */
export async function importLeads(
  db: Kysely<Database>,
  campaign: ImportCampaign,
  source: AsyncIterable<ReadLeadResult>,
  opts: ImportOptions,
): Promise<ImportSummary> {
  const summary = emptySummary();
  const batchSize = Math.max(1, opts.batchSize ?? defaultImportBatchRows(db));
  // Numbers already seen in this import, with the line of each (compact: a million of them
  // take 48 MB, not 100).
  const screen = new RowScreen(campaign, opts.sourceFile);
  let batch: PlannedRow[] = [];
  const prior = await readImportPrior(db, campaign.id, opts.sourceFile);
  const writer = leadBatchWriter(db, { campaignId: campaign.id, sourceFile: opts.sourceFile, now: opts.now, readOnly: !!opts.dryRun });
  const writing = new WriteWindow(Math.max(1, opts.parallelWrites ?? 1));
  const idTurns = new Turns();
  const write = (rows: PlannedRow[]): Promise<void> => writeBatch(writer, idTurns, prior, campaign, rows, opts, summary);

  const sample = (line: number, message: string): void => {
    if (summary.samples.length < MAX_SAMPLES) summary.samples.push({ line, message });
  };

  try {
    await readAll();
  } finally {
    // A read error leaves no write running behind it on the store the caller closes next.
    await writing.settled();
  }
  await writing.drain();
  if (batch.length > 0) await write(batch);
  if (!opts.dryRun && summary.accepted + summary.invalid + summary.suppressed >= REFRESH_AFTER_ROWS) await refreshStatistics(db, ['leads', 'lead_contacts']);
  opts.onProgress?.(summary.read);
  return summary;

  async function readAll(): Promise<void> {
    for await (const result of source) {
      summary.read++;
      if (result.ok) {
        if (result.warnings) {
          summary.warnings += result.warnings.length;
          for (const w of result.warnings) sample(result.line, w);
        }
        const repeat = screen.repeatOf(result);
        if (repeat) {
          summary.duplicates++;
          sample(result.line, `${result.lead.phoneNumber} duplicates line ${repeat.line}`);
          continue;
        }
      } else {
        summary.invalid++;
        summary.invalidByReason[result.reason] = (summary.invalidByReason[result.reason] ?? 0) + 1;
        sample(result.line, `${result.phoneText === '' ? '(empty)' : result.phoneText}: ${result.reason}`);
      }
      batch.push(screen.plan(result));
      if (batch.length >= batchSize) {
        // Batches are written while the next is read: on PostgreSQL the writing happens in
        // the server's processes, so reading and checking rows need not wait for it. Never
        // more than `parallelWrites` batches in flight, so memory stays that of a few batches.
        await writing.room();
        writing.add(write(batch));
        batch = [];
        opts.onProgress?.(summary.read);
      }
    }
  }
}

/** Writes one batch; its counts join the summary once its transaction committed (a batch run again must not count twice). */
async function writeBatch(
  writer: LeadBatchWriter,
  idTurns: Turns,
  prior: ImportPrior,
  campaign: ImportCampaign,
  rows: PlannedRow[],
  opts: ImportOptions,
  summary: ImportSummary,
): Promise<void> {
  const outcomes = await writer.run(idTurns.next(), (trx, insert) => writeRows(trx, insert, prior, campaign, rows, rowOptions(opts)));
  // Invalid rows and duplicates were counted as they were read.
  for (const o of outcomes) {
    if (o.outcome === 'accepted') summary.accepted++;
    else if (o.outcome === 'suppressed') summary.suppressed++;
    else if (o.outcome === 'updated') summary.updated++;
    else if (o.outcome === 'unchanged') summary.unchanged++;
  }
}

function rowOptions(opts: ImportOptions): RowWriteOptions {
  return { now: opts.now, keyPrefix: opts.sourceFile, ...(opts.dryRun ? { dryRun: true } : {}), ...(opts.suppressed ? { suppressed: opts.suppressed } : {}) };
}

function emptySummary(): ImportSummary {
  return { read: 0, accepted: 0, updated: 0, unchanged: 0, duplicates: 0, invalid: 0, invalidByReason: {}, suppressed: 0, warnings: 0, samples: [] };
}
