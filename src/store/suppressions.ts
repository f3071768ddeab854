import type { Kysely } from 'kysely';
import { isPostgres } from './dialect.js';
import { anyText, keyParts } from './key-lists.js';
import { DUE_LEAD_STATES, type Database } from './types.js';

// The do-not-call list. The file is the source of truth for rows with source 'file':
// each sync makes the table match it. A lead whose number is on the list becomes
// `suppressed` (final); taking a number off the list later does not revive such leads,
// because an operator who once said "do not call" should re-import on purpose. The file
// itself is read by leads/suppression-file.ts.

/** The source of rows that mirror suppression_file (a sync replaces them). */
export const FILE_SOURCE = 'file';
const CHUNK = 500;

/** Makes the 'file' rows of the table equal to `numbers`; returns how many were added and removed. */
export async function syncSuppressions(db: Kysely<Database>, numbers: Iterable<string>, now: number): Promise<{ added: number; removed: number }> {
  const wanted = new Set(numbers);
  return db.transaction().execute(async (trx) => {
    const current = await trx.selectFrom('suppressions').select(['phone_number', 'source']).execute();
    const present = new Set(current.map((r) => r.phone_number));
    const stale = current.filter((r) => r.source === FILE_SOURCE && !wanted.has(r.phone_number)).map((r) => r.phone_number);
    const fresh = [...wanted].filter((n) => !present.has(n));
    for (let i = 0; i < stale.length; i += CHUNK) {
      await trx.deleteFrom('suppressions').where('source', '=', FILE_SOURCE).where('phone_number', 'in', stale.slice(i, i + CHUNK)).execute();
    }
    for (let i = 0; i < fresh.length; i += CHUNK) {
      const values = fresh.slice(i, i + CHUNK).map((phone_number) => ({ phone_number, source: FILE_SOURCE, added_at: now }));
      await trx.insertInto('suppressions').values(values).onConflict((oc) => oc.column('phone_number').doNothing()).execute();
    }
    return { added: fresh.length, removed: stale.length };
  });
}

/**
 * The list as syncSuppressions(db, fileNumbers) would leave it, without writing: the rows
 * other sources added, and the file's numbers. Without `fileNumbers`, the list as it is.
 */
export async function suppressionsAfterSync(db: Kysely<Database>, fileNumbers?: Iterable<string>): Promise<Set<string>> {
  const rows = await db.selectFrom('suppressions').select(['phone_number', 'source']).execute();
  const list = new Set(rows.filter((r) => !fileNumbers || r.source !== FILE_SOURCE).map((r) => r.phone_number));
  for (const n of fileNumbers ?? []) list.add(n);
  return list;
}

/** True when the number (E.164) is on the do-not-call list. */
export async function isSuppressed(db: Kysely<Database>, phone: string): Promise<boolean> {
  const row = await db.selectFrom('suppressions').select('phone_number').where('phone_number', '=', phone).executeTakeFirst();
  return row !== undefined;
}

/** Of `phones`, those on the do-not-call list (one query on PostgreSQL, one per 500 numbers on SQLite). */
export async function suppressedAmong(db: Kysely<Database>, phones: readonly string[]): Promise<Set<string>> {
  const found = new Set<string>();
  for (const part of keyParts(db, phones, CHUNK)) {
    const query = db.selectFrom('suppressions').select('phone_number');
    const rows = await (isPostgres(db) ? query.where('phone_number', '=', anyText(part)) : query.where('phone_number', 'in', part)).execute();
    for (const r of rows) found.add(r.phone_number);
  }
  return found;
}

/**
 * Leads waiting for a call (pending or retry-scheduled) whose primary number is on the
 * list become `suppressed`. Leads in a call are left to finish; the dialer is expected to check the
 * list again before each dial. Returns the number of leads changed.
 */
export async function suppressPendingLeads(db: Kysely<Database>, now: number, opts: { campaignId?: number } = {}): Promise<number> {
  let query = db
    .updateTable('leads')
    .set({ state: 'suppressed', state_reason: 'on the suppression list', next_due_at: null, updated_at: now })
    .where('state', 'in', [...DUE_LEAD_STATES])
    .where('phone_number', 'in', (eb) => eb.selectFrom('suppressions').select('phone_number'));
  if (opts.campaignId !== undefined) query = query.where('campaign_id', '=', opts.campaignId);
  const result = await query.executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** Adds numbers (E.164) with `source` ('cli', 'opt-out:CAMPAIGN'…); numbers already listed keep their row. Returns how many were new. */
export async function addSuppressions(db: Kysely<Database>, numbers: readonly string[], source: string, now: number): Promise<number> {
  let added = 0;
  for (let i = 0; i < numbers.length; i += CHUNK) {
    const values = numbers.slice(i, i + CHUNK).map((phone_number) => ({ phone_number, source, added_at: now }));
    const res = await db.insertInto('suppressions').values(values).onConflict((oc) => oc.column('phone_number').doNothing()).executeTakeFirst();
    added += Number(res.numInsertedOrUpdatedRows ?? 0);
  }
  return added;
}

/** Takes numbers off the list, whatever added them; returns the rows removed (with their sources). */
export async function removeSuppressions(db: Kysely<Database>, numbers: readonly string[]): Promise<{ phone_number: string; source: string }[]> {
  const removed: { phone_number: string; source: string }[] = [];
  for (let i = 0; i < numbers.length; i += CHUNK) {
    const chunk = numbers.slice(i, i + CHUNK);
    const rows = await db.selectFrom('suppressions').select(['phone_number', 'source']).where('phone_number', 'in', chunk).execute();
    if (rows.length === 0) continue;
    await db.deleteFrom('suppressions').where('phone_number', 'in', chunk).execute();
    removed.push(...rows);
  }
  return removed;
}

/** Every listed number, as a set (the engine holds it to skip suppressed leads without a query each). */
export async function suppressedNumbers(db: Kysely<Database>): Promise<Set<string>> {
  const rows = await db.selectFrom('suppressions').select('phone_number').execute();
  return new Set(rows.map((r) => r.phone_number));
}

/** Every listed number, oldest first. */
export async function listSuppressions(db: Kysely<Database>): Promise<{ phone_number: string; source: string; added_at: number }[]> {
  return db.selectFrom('suppressions').select(['phone_number', 'source', 'added_at']).orderBy('added_at').orderBy('phone_number').execute();
}

/**
 * Leads waiting for a call (pending or retry-scheduled) to one of `numbers`, as their
 * primary number or as the contact being worked, in any campaign, become `suppressed`:
 * their scheduled retries are cancelled. Returns the number of leads changed.
 */
export async function suppressLeadsOfNumbers(db: Kysely<Database>, numbers: readonly string[], now: number, reason = 'on the suppression list'): Promise<number> {
  let changed = 0;
  for (let i = 0; i < numbers.length; i += CHUNK) {
    const chunk = numbers.slice(i, i + CHUNK);
    const viaContacts = await db
      .selectFrom('lead_contacts')
      .innerJoin('leads', 'leads.id', 'lead_contacts.lead_id')
      .select('leads.id')
      .where('lead_contacts.phone_number', 'in', chunk)
      .whereRef('lead_contacts.position', '=', 'leads.contact_position')
      .execute();
    const direct = await db.selectFrom('leads').select('id').where('phone_number', 'in', chunk).where('contact_position', '=', 0).execute();
    const ids = [...new Set([...viaContacts, ...direct].map((r) => r.id))];
    for (let j = 0; j < ids.length; j += CHUNK) {
      const res = await db
        .updateTable('leads')
        .set({ state: 'suppressed', state_reason: reason, next_due_at: null, updated_at: now })
        .where('id', 'in', ids.slice(j, j + CHUNK))
        .where('state', 'in', [...DUE_LEAD_STATES])
        .executeTakeFirst();
      changed += Number(res.numUpdatedRows);
    }
  }
  return changed;
}

/** Up to `limit` listed numbers after `after`, in number order (the API's pages). */
export async function suppressionPage(db: Kysely<Database>, after: string, limit: number): Promise<{ phone_number: string; source: string; added_at: number }[]> {
  const rows = await db.selectFrom('suppressions').select(['phone_number', 'source', 'added_at']).where('phone_number', '>', after).orderBy('phone_number').limit(limit).execute();
  return rows.map((r) => ({ ...r, added_at: Number(r.added_at) }));
}

/** One listed number's row, or undefined. */
export async function suppressionOf(db: Kysely<Database>, phone: string): Promise<{ phone_number: string; source: string; added_at: number } | undefined> {
  const row = await db.selectFrom('suppressions').select(['phone_number', 'source', 'added_at']).where('phone_number', '=', phone).executeTakeFirst();
  return row && { ...row, added_at: Number(row.added_at) };
}
