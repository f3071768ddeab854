import type { Kysely } from 'kysely';
import { refreshStatistics } from '../store/bulk-insert.js';
import { defaultImportBatchRows, leadBatchWriter, type InsertLeads, type LeadBatchWriter } from '../store/lead-batch.js';
import type { StagedLead } from '../store/lead-copy.js';
import { deleteLeadsById, leadsByDedupeKey, readImportPrior, refreshPendingLead, secondaryNumbersOf, type ImportPrior, type StoredLead } from '../store/lead-import.js';
import { suppressedAmong } from '../store/suppressions.js';
import type { Database } from '../store/types.js';
import { PhoneSet } from './number-set.js';
import type { ReadLeadResult } from './read-leads.js';
import { Turns, WriteWindow } from './write-window.js';

// Lead import: rows arrive as a stream and are written in batches, one transaction per
// batch (src/store/lead-batch.ts: multi-row inserts on SQLite, COPY on PostgreSQL), so that
// a million rows load in seconds and a crash loses at most one batch (re-running the
// import finishes the job: it is idempotent). This file decides what each row becomes; the
// queries are the store's (lead-import.ts, lead-batch.ts, suppressions.ts).
//
// What makes two rows "the same lead" (the dedupe key):
//   - a valid row: its E.164 number, or `file:line` when the campaign allows duplicates;
//   - an invalid row: `invalid:file:line`, so that re-importing does not add it twice.
// Counting: every row read lands in exactly one of accepted, updated, unchanged,
// duplicates, invalid or suppressed.
//   - duplicates: a number seen earlier in this same import;
//   - updated / unchanged: the lead exists from an earlier import; its variables,
//     timezone and secondary contacts are refreshed only while it is still `pending`
//     (a lead in progress keeps what it was dialled with);
//   - a row that was invalid and is now fixed replaces its `invalid:` placeholder.
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

interface PlannedRow {
  result: ReadLeadResult;
  key: string;
  variablesJson: string;
}

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
  const seen = new PhoneSet();
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
  if (!opts.dryRun && summary.accepted + summary.invalid + summary.suppressed >= STATISTICS_AFTER_ROWS) await refreshStatistics(db, ['leads', 'lead_contacts']);
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
        if (!campaign.allowDuplicates) {
          const first = seen.addAt(result.lead.phoneNumber, result.line);
          if (first !== undefined) {
            summary.duplicates++;
            sample(result.line, `${result.lead.phoneNumber} duplicates line ${first}`);
            continue;
          }
        }
      } else {
        summary.invalid++;
        summary.invalidByReason[result.reason] = (summary.invalidByReason[result.reason] ?? 0) + 1;
        sample(result.line, `${result.phoneText === '' ? '(empty)' : result.phoneText}: ${result.reason}`);
      }
      batch.push(plan(result, campaign, opts.sourceFile));
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

/** New rows from which an import refreshes the planner's statistics (PostgreSQL; a few hundred ms at 1M rows). */
const STATISTICS_AFTER_ROWS = 10_000;

function plan(result: ReadLeadResult, campaign: ImportCampaign, sourceFile: string): PlannedRow {
  if (!result.ok) return { result, key: `invalid:${sourceFile}:${result.line}`, variablesJson: JSON.stringify(result.variables) };
  const key = campaign.allowDuplicates ? `${sourceFile}:${result.line}` : result.lead.phoneNumber;
  return { result, key, variablesJson: JSON.stringify(result.lead.variables) };
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
  const counts = await writer.run(idTurns.next(), (trx, insert) => batchIn(trx, insert, prior, campaign, rows, opts));
  summary.accepted += counts.accepted;
  summary.suppressed += counts.suppressed;
  summary.updated += counts.updated;
  summary.unchanged += counts.unchanged;
}

/** What a batch's writing counts (the rest is counted as rows are read). */
interface BatchCounts {
  accepted: number;
  suppressed: number;
  updated: number;
  unchanged: number;
}

function emptySummary(): ImportSummary {
  return { read: 0, accepted: 0, updated: 0, unchanged: 0, duplicates: 0, invalid: 0, invalidByReason: {}, suppressed: 0, warnings: 0, samples: [] };
}

async function batchIn(trx: Kysely<Database>, insert: InsertLeads, prior: ImportPrior, campaign: ImportCampaign, rows: PlannedRow[], opts: ImportOptions): Promise<BatchCounts> {
  const counts: BatchCounts = { accepted: 0, suppressed: 0, updated: 0, unchanged: 0 };
  // Placeholders of rows that were invalid before and are valid now.
  const placeholders = prior.invalidFromFile ? rows.filter((r) => r.result.ok).map((r) => `invalid:${opts.sourceFile}:${r.result.line}`) : [];
  const existing = prior.campaignHasLeads ? await leadsByDedupeKey(trx, campaign.id, [...rows.map((r) => r.key), ...placeholders]) : new Map<string, StoredLead>();

  const fixed = placeholders.map((k) => existing.get(k)?.id).filter((id): id is number => id !== undefined);
  if (fixed.length > 0 && !opts.dryRun) await deleteLeadsById(trx, fixed);

  const fresh = rows.filter((r) => !existing.has(r.key));
  const freshNumbers = fresh.flatMap((r) => (r.result.ok ? [r.result.lead.phoneNumber] : []));
  const dnc = opts.suppressed
    ? new Set(freshNumbers.filter((n) => opts.suppressed!.has(n)))
    : prior.anySuppressions && freshNumbers.length > 0
      ? await suppressedAmong(trx, freshNumbers)
      : new Set<string>();

  const leads = fresh.map((row) => newLead(row, dnc, opts.now, counts));
  if (!opts.dryRun) await insert(leads);
  await refreshExisting(trx, rows, existing, opts, counts);
  return counts;
}

/** A new lead as stored; counts it as accepted or suppressed. */
function newLead(row: PlannedRow, dnc: Set<string>, now: number, counts: BatchCounts): StagedLead {
  const { result, key, variablesJson } = row;
  if (!result.ok) {
    return { dedupeKey: key, phoneNumber: result.phoneText, variablesJson, timezone: null, state: 'invalid', stateReason: result.reason, nextDueAt: null, sourceLine: result.line, contacts: null };
  }
  const { lead } = result;
  const contacts = lead.secondary;
  const timezone = lead.timezone ?? null;
  if (dnc.has(lead.phoneNumber)) {
    counts.suppressed++;
    return { dedupeKey: key, phoneNumber: lead.phoneNumber, variablesJson, timezone, state: 'suppressed', stateReason: 'on the suppression list', nextDueAt: null, sourceLine: result.line, contacts };
  }
  counts.accepted++;
  return { dedupeKey: key, phoneNumber: lead.phoneNumber, variablesJson, timezone, state: 'pending', stateReason: null, nextDueAt: now, sourceLine: result.line, contacts };
}

async function refreshExisting(trx: Kysely<Database>, rows: PlannedRow[], existing: Map<string, StoredLead>, opts: ImportOptions, counts: BatchCounts): Promise<void> {
  const candidates = rows.filter((r) => r.result.ok && existing.get(r.key)?.state === 'pending');
  const secondaries = candidates.length > 0 ? await secondaryNumbersOf(trx, candidates.map((r) => existing.get(r.key)!.id)) : new Map<number, string[]>();

  for (const row of rows) {
    const lead = existing.get(row.key);
    if (!lead) continue;
    if (!row.result.ok) continue; // counted as invalid already
    if (lead.state !== 'pending') {
      counts.unchanged++;
      continue;
    }
    const wanted = row.result.lead;
    const timezone = wanted.timezone ?? null;
    const contactsChanged = (secondaries.get(lead.id) ?? []).join(',') !== wanted.secondary.join(',');
    if (lead.variables_json === row.variablesJson && lead.timezone === timezone && !contactsChanged) {
      counts.unchanged++;
      continue;
    }
    counts.updated++;
    if (opts.dryRun) continue;
    await refreshPendingLead(trx, lead.id, { variablesJson: row.variablesJson, timezone, ...(contactsChanged ? { secondary: wanted.secondary } : {}) }, opts.now);
  }
}
