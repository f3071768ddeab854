import crypto from 'node:crypto';
import type { Kysely } from 'kysely';
import { leadBatchWriter } from '../store/lead-batch.js';
import type { ImportPrior } from '../store/lead-import.js';
import { announceNewWork } from '../store/new-work.js';
import type { Database } from '../store/types.js';
import type { ImportCampaign } from './import.js';
import { RowScreen, writeRows, type LeadOutcome, type PlannedRow } from './import-rows.js';
import { readLeadItems, type LeadItem } from './lead-items.js';

// Leads posted through the API: the items are read as a file's rows are (lead-items.ts) and
// go through the same rules (import-rows.ts), but all in ONE transaction, so that a
// request that fails writes nothing, and with an answer per item.

/** What became of one item, in the API's words. */
export interface ItemOutcome {
  id: number | null;
  external_id: string | null;
  outcome: LeadOutcome;
  reason: string | null;
}

export interface ItemImportOptions {
  now: number;
  /** First in the transaction (the Idempotency-Key's row: its key decides between two identical requests). */
  before?: (trx: Kysely<Database>) => Promise<void>;
  /** Last in the transaction, with the answer (kept under the Idempotency-Key). */
  after?: (trx: Kysely<Database>, outcomes: ItemOutcome[]) => Promise<void>;
  /**
   * Whether the engines (every instance's, on PostgreSQL) are told of the new or changed
   * leads; default true. Only a campaign the engine acts on now needs it (the API's rule).
   */
  announce?: boolean;
}

/** What the store holds is looked up in full: a request is at most 10,000 items. */
const LOOK_UP_ALL: ImportPrior = { campaignHasLeads: true, invalidFromFile: false, anySuppressions: true };

/** Imports API items into one campaign in one transaction; returns an outcome per item, in order. */
export async function importLeadItems(db: Kysely<Database>, campaign: ImportCampaign, items: readonly LeadItem[], opts: ItemImportOptions): Promise<ItemOutcome[]> {
  const results = readLeadItems(items, campaign.defaultCountry);
  // Dedupe keys of this request's invalid items (and of every item when the campaign
  // allows duplicates) must never meet another request's: a prefix of their own.
  const keyPrefix = `api:${crypto.randomUUID()}`;
  const screen = new RowScreen(campaign, keyPrefix, items.length);
  const planned: PlannedRow[] = [];
  const repeats = new Map<number, { by: string; line: number }>();
  for (const result of results) {
    const repeat = screen.repeatOf(result);
    if (repeat) repeats.set(result.line, repeat);
    else planned.push(screen.plan(result));
  }
  const writer = leadBatchWriter(db, { campaignId: campaign.id, sourceFile: 'api', now: opts.now });
  const turn = { previous: Promise.resolve(), done: () => undefined };
  return writer.run(turn, async (trx, insert) => {
    await opts.before?.(trx);
    const written = await writeRows(trx, insert, LOOK_UP_ALL, campaign, planned, { now: opts.now, keyPrefix });
    const byLine = new Map<number, ItemOutcome>();
    planned.forEach((row, i) => {
      const o = written[i]!;
      const warnings = row.result.ok ? row.result.warnings : undefined;
      const reason = warnings ? [o.reason, ...warnings].filter((r) => r !== null).join('; ') : o.reason;
      byLine.set(row.result.line, { id: o.id, external_id: row.result.externalId ?? null, outcome: o.outcome, reason });
    });
    const outcomes = results.map((result): ItemOutcome => {
      const done = byLine.get(result.line);
      if (done) return done;
      const repeat = repeats.get(result.line)!;
      const first = byLine.get(repeat.line);
      const reason = repeat.by === 'number' ? `same number as item ${repeat.line - 1}` : `same external_id as item ${repeat.line - 1}`;
      return { id: first?.id ?? null, external_id: result.externalId ?? null, outcome: 'duplicate', reason };
    });
    if (opts.announce !== false && outcomes.some((o) => o.outcome === 'accepted' || o.outcome === 'updated')) await announceNewWork(trx);
    await opts.after?.(trx, outcomes);
    return outcomes;
  });
}
