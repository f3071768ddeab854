import type { Kysely } from 'kysely';
import { suppressedAmong } from '../store/suppressions.js';
import type pg from 'pg';
import { BulkInserter, refreshStatistics } from '../store/bulk-insert.js';
import { isPostgres } from '../store/dialect.js';
import type { StagedLead } from '../store/lead-copy.js';
import { PhoneSet } from './number-set.js';
import { Turns, WriteWindow, type Turn } from './write-window.js';
import type { Database } from '../store/types.js';
import type { ReadLeadResult } from './read-leads.js';

// Lead import: rows arrive as a stream and are written in batches, one transaction per
// batch, with multi-row inserts (on PostgreSQL by COPY: store/lead-copy.ts), so that a
// million rows load in seconds and a crash
// loses at most one batch (re-running the import finishes the job: it is idempotent).
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
  /** Secondary numbers skipped (bad or repeated), with the first few examples. */
  warnings: number;
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
  /** Rows per transaction (default 2000 on SQLite; 5000 on PostgreSQL, where each batch pays its round trips: 10,000 went no faster and took the command to 272 MB). */
  batchSize?: number;
  /**
   * Count what the import would do and write nothing (`leads import --dry-run`): the
   * store is only read, to tell new leads from updated and unchanged ones.
   */
  dryRun?: boolean;
  /** The do-not-call numbers to judge rows by, instead of the store's list (a dry run reads the suppression file). */
  suppressed?: ReadonlySet<string>;
  /**
   * Batches written at once (default 1). `leads import` on PostgreSQL passes 2, on a pool
   * of two connections: each batch's rows are then checked and indexed by a server process
   * of its own while the command reads the next batch (issue 12: ≥ 50k rows/s).
   */
  parallelWrites?: number;
}

// Rows per INSERT statement: 12 columns x 1024 rows stays under SQLite's and
// PostgreSQL's parameter limits (32,766 and 65,535).
const INSERT_CHUNK = 1024;
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
  const batchSize = Math.max(1, opts.batchSize ?? (isPostgres(db) ? 5_000 : 2000));
  // Numbers already seen in this import (compact: a million of them take 32 MB, not 70).
  const seen = new PhoneSet();
  let batch: PlannedRow[] = [];
  const writers = makeWriters();
  const prior = await readPrior(db, campaign.id, opts.sourceFile);
  const writing = new WriteWindow(Math.max(1, opts.parallelWrites ?? 1));
  const idTurns = new Turns();
  const write = (rows: PlannedRow[]): Promise<void> => writeBatch(db, writers, prior, campaign, rows, opts, summary, idTurns.next());

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
          if (!seen.add(result.lead.phoneNumber)) {
            summary.duplicates++;
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

/**
 * What the database held when the import began. A first import into an empty campaign
 * (the million-row case) can skip looking up every key: within one import the keys are
 * unique already (numbers are deduplicated in memory, `file:line` keys are unique).
 */
interface Prior {
  campaignHasLeads: boolean;
  /** Invalid rows of this file were stored before, so fixed rows may replace them. */
  invalidFromFile: boolean;
  anySuppressions: boolean;
}

async function readPrior(db: Kysely<Database>, campaignId: number, sourceFile: string): Promise<Prior> {
  const anyLead = await db.selectFrom('leads').select('id').where('campaign_id', '=', campaignId).limit(1).executeTakeFirst();
  const anyInvalid = anyLead
    ? await db.selectFrom('leads').select('id').where('campaign_id', '=', campaignId).where('state', '=', 'invalid').where('source_file', '=', sourceFile).limit(1).executeTakeFirst()
    : undefined;
  const anySuppression = await db.selectFrom('suppressions').select('phone_number').limit(1).executeTakeFirst();
  return { campaignHasLeads: !!anyLead, invalidFromFile: !!anyInvalid, anySuppressions: !!anySuppression };
}

async function writeBatch(
  db: Kysely<Database>,
  writers: Writers,
  prior: Prior,
  campaign: ImportCampaign,
  rows: PlannedRow[],
  opts: ImportOptions,
  summary: ImportSummary,
  idTurn: Turn,
): Promise<void> {
  try {
    // On PostgreSQL the new leads go by COPY, on a connection of the store's pool taken for
    // this batch's transaction only (the daemon's engine shares that pool of one).
    // Loaded only there: SQLite needs nothing of pg.
    if (!opts.dryRun && isPostgres(db)) {
      const { hasPgClient, withPgClient } = await import('../store/postgres.js');
      if (hasPgClient(db)) {
        for (let attempt = 1; ; attempt++) {
          // Counted apart until the batch commits: a batch run again must not count twice.
          const counts = emptySummary();
          try {
            await withPgClient(db, (client, clientDb) => writeBatchIn(clientDb, { client, idTurn }, prior, campaign, rows, opts, counts));
            addCounts(summary, counts);
            return;
          } catch (err) {
            // Two writers (or a writer and the daemon) that met on the counter rows in
            // opposite orders: the server rolled this batch back whole; run it again.
            if (attempt >= BATCH_ATTEMPTS || !isLockConflict(err)) throw err;
          }
        }
      }
    }
    await writeBatchIn(db, writers, prior, campaign, rows, opts, summary);
  } finally {
    // Whatever happened, the next batch may take its ids.
    idTurn.done();
  }
}

/** Tries of one PostgreSQL batch that lost a lock conflict. */
const BATCH_ATTEMPTS = 3;

/** PostgreSQL's deadlock_detected and lock_not_available (lock_timeout). */
function isLockConflict(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === '40P01' || code === '55P03';
}

function emptySummary(): ImportSummary {
  return { read: 0, accepted: 0, updated: 0, unchanged: 0, duplicates: 0, invalid: 0, invalidByReason: {}, suppressed: 0, warnings: 0, samples: [] };
}

/** Adds what a batch's writing counted (the rest is counted as rows are read). */
function addCounts(summary: ImportSummary, batch: ImportSummary): void {
  summary.accepted += batch.accepted;
  summary.suppressed += batch.suppressed;
  summary.updated += batch.updated;
  summary.unchanged += batch.unchanged;
}

async function writeBatchIn(
  db: Kysely<Database>,
  writers: Writers | CopyWriter,
  prior: Prior,
  campaign: ImportCampaign,
  rows: PlannedRow[],
  opts: ImportOptions,
  summary: ImportSummary,
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    // Placeholders of rows that were invalid before and are valid now.
    const placeholders = prior.invalidFromFile ? rows.filter((r) => r.result.ok).map((r) => `invalid:${opts.sourceFile}:${r.result.line}`) : [];
    const lookup = prior.campaignHasLeads ? [...rows.map((r) => r.key), ...placeholders] : [];
    const existing = new Map<string, { id: number; state: string; variables_json: string; timezone: string | null }>();
    for (let i = 0; i < lookup.length; i += INSERT_CHUNK) {
      const found = await trx
        .selectFrom('leads')
        .select(['id', 'dedupe_key', 'state', 'variables_json', 'timezone'])
        .where('campaign_id', '=', campaign.id)
        .where('dedupe_key', 'in', lookup.slice(i, i + INSERT_CHUNK))
        .execute();
      for (const f of found) existing.set(f.dedupe_key, f);
    }

    const fixed = placeholders.map((k) => existing.get(k)?.id).filter((id): id is number => id !== undefined);
    if (fixed.length > 0 && !opts.dryRun) await trx.deleteFrom('leads').where('id', 'in', fixed).execute();

    const fresh = rows.filter((r) => !existing.has(r.key));
    const freshNumbers = fresh.flatMap((r) => (r.result.ok ? [r.result.lead.phoneNumber] : []));
    const dnc = opts.suppressed
      ? new Set(freshNumbers.filter((n) => opts.suppressed!.has(n)))
      : prior.anySuppressions && freshNumbers.length > 0
        ? await suppressedAmong(trx, freshNumbers)
        : new Set<string>();

    if ('client' in writers) await copyFresh(trx, writers, campaign, fresh, dnc, opts, summary);
    else await insertFresh(trx, writers, campaign, fresh, dnc, opts, summary);
    await refreshExisting(trx, rows, existing, opts, summary);
  });
}

const LEAD_COLUMNS = [
  'campaign_id',
  'dedupe_key',
  'phone_number',
  'variables_json',
  'timezone',
  'state',
  'state_reason',
  'next_due_at',
  'source_file',
  'source_line',
  'created_at',
  'updated_at',
] as const;

/** The two multi-row inserts of an import, compiled once per import. */
interface Writers {
  leads: BulkInserter<'leads'>;
  contacts: BulkInserter<'lead_contacts'>;
}

function makeWriters(): Writers {
  return {
    leads: new BulkInserter('leads', LEAD_COLUMNS, ['id', 'dedupe_key']),
    contacts: new BulkInserter('lead_contacts', ['lead_id', 'position', 'phone_number']),
  };
}

/** PostgreSQL's writer: the batch's connection, for COPY, and its turn to take lead ids. */
interface CopyWriter {
  client: pg.PoolClient;
  idTurn: Turn;
}

/** A new lead as stored, whichever way it is written; counts it as accepted or suppressed. */
function newLead(row: PlannedRow, dnc: Set<string>, now: number, summary: ImportSummary): StagedLead {
  const { result, key, variablesJson } = row;
  if (!result.ok) {
    return { dedupeKey: key, phoneNumber: result.phoneText, variablesJson, timezone: null, state: 'invalid', stateReason: result.reason, nextDueAt: null, sourceLine: result.line, contacts: null };
  }
  const { lead } = result;
  const contacts = lead.secondary;
  const timezone = lead.timezone ?? null;
  if (dnc.has(lead.phoneNumber)) {
    summary.suppressed++;
    return { dedupeKey: key, phoneNumber: lead.phoneNumber, variablesJson, timezone, state: 'suppressed', stateReason: 'on the suppression list', nextDueAt: null, sourceLine: result.line, contacts };
  }
  summary.accepted++;
  return { dedupeKey: key, phoneNumber: lead.phoneNumber, variablesJson, timezone, state: 'pending', stateReason: null, nextDueAt: now, sourceLine: result.line, contacts };
}

async function copyFresh(
  trx: Kysely<Database>,
  writer: CopyWriter,
  campaign: ImportCampaign,
  fresh: PlannedRow[],
  dnc: Set<string>,
  opts: ImportOptions,
  summary: ImportSummary,
): Promise<void> {
  const { copyNewLeads } = await import('../store/lead-copy.js');
  const leads = fresh.map((row) => newLead(row, dnc, opts.now, summary));
  await copyNewLeads(writer.client, trx, leads, { campaignId: campaign.id, sourceFile: opts.sourceFile, now: opts.now, idTurn: writer.idTurn });
}

async function insertFresh(
  trx: Kysely<Database>,
  writers: Writers,
  campaign: ImportCampaign,
  fresh: PlannedRow[],
  dnc: Set<string>,
  opts: ImportOptions,
  summary: ImportSummary,
): Promise<void> {
  const contacts = new Map<string, readonly string[]>();
  const { now, sourceFile } = opts;
  const values: unknown[] = [];
  for (const row of fresh) {
    const l = newLead(row, dnc, now, summary);
    if (l.contacts && l.contacts.length > 0) contacts.set(l.dedupeKey, l.contacts);
    values.push(campaign.id, l.dedupeKey, l.phoneNumber, l.variablesJson, l.timezone, l.state, l.stateReason, l.nextDueAt, sourceFile, l.sourceLine, now, now);
  }

  if (opts.dryRun) return;
  const inserted = await writers.leads.insertAll<{ id: number; dedupe_key: string }>(trx, values, INSERT_CHUNK);
  const contactValues: unknown[] = [];
  for (const { id, dedupe_key } of inserted) {
    const numbers = contacts.get(dedupe_key);
    if (!numbers) continue;
    for (let i = 0; i < numbers.length; i++) contactValues.push(id, i + 1, numbers[i]);
  }
  await writers.contacts.insertAll(trx, contactValues, INSERT_CHUNK);
}

async function refreshExisting(
  trx: Kysely<Database>,
  rows: PlannedRow[],
  existing: Map<string, { id: number; state: string; variables_json: string; timezone: string | null }>,
  opts: ImportOptions,
  summary: ImportSummary,
): Promise<void> {
  const { now } = opts;
  const candidates = rows.filter((r) => r.result.ok && existing.get(r.key)?.state === 'pending');
  const secondaries = new Map<number, string[]>();
  if (candidates.length > 0) {
    const ids = candidates.map((r) => existing.get(r.key)!.id);
    const stored = await trx.selectFrom('lead_contacts').select(['lead_id', 'position', 'phone_number']).where('lead_id', 'in', ids).where('position', '>=', 1).orderBy('lead_id').orderBy('position').execute();
    for (const c of stored) secondaries.set(c.lead_id, [...(secondaries.get(c.lead_id) ?? []), c.phone_number]);
  }

  for (const row of rows) {
    const lead = existing.get(row.key);
    if (!lead) continue;
    if (!row.result.ok) continue; // counted as invalid already
    if (lead.state !== 'pending') {
      summary.unchanged++;
      continue;
    }
    const wanted = row.result.lead;
    const timezone = wanted.timezone ?? null;
    const contactsChanged = (secondaries.get(lead.id) ?? []).join(',') !== wanted.secondary.join(',');
    if (lead.variables_json === row.variablesJson && lead.timezone === timezone && !contactsChanged) {
      summary.unchanged++;
      continue;
    }
    summary.updated++;
    if (opts.dryRun) continue;
    await trx.updateTable('leads').set({ variables_json: row.variablesJson, timezone, updated_at: now }).where('id', '=', lead.id).execute();
    if (contactsChanged) {
      await trx.deleteFrom('lead_contacts').where('lead_id', '=', lead.id).where('position', '>=', 1).execute();
      if (wanted.secondary.length > 0) {
        await trx
          .insertInto('lead_contacts')
          .values(wanted.secondary.map((phone_number, i) => ({ lead_id: lead.id, position: i + 1, phone_number })))
          .execute();
      }
    }
  }
}
