import { sql, type Kysely } from 'kysely';
import { isPostgres } from './dialect.js';
import type { Database } from './types.js';

// Deliveries for accounts another instance holds (several active instances, migration 0034):
// one writer per account. The receiving instance queues the delivery only while another
// instance holds the account's unexpired lease (by the database's clock, as the leases are
// judged); otherwise it applies the delivery itself, so nothing waits for a holder that
// is not there. The holder applies each queued delivery and deletes it in one transaction.
// No NOTIFY: PostgreSQL commits the transactions that notify one at a time, each waiting
// for the one before to reach the disk, and one per delivery (200 accounts on 3 instances)
// made webhooks wait seconds for their answer; the holders look every 200 ms instead.

export interface InboxItem {
  id: number;
  received_at: number;
  payload: string;
}

/** Queues a delivery for `account` if an instance other than `instance` holds it now: true when queued. */
export async function queueForHolder(
  db: Kysely<Database>,
  delivery: { account: string; instance: string; receivedAt: number; payload: string },
): Promise<boolean> {
  // Only PostgreSQL has several active instances; a SQLite file has one daemon.
  if (!isPostgres(db)) return false;
  const { rows } = await sql<{ id: number }>`
    INSERT INTO webhook_inbox (account, received_at, payload)
    SELECT ${delivery.account}, ${Math.floor(delivery.receivedAt)}, ${delivery.payload}
    WHERE EXISTS (
      SELECT 1 FROM account_leases
      WHERE account = ${delivery.account} AND holder IS NOT NULL AND holder <> ${delivery.instance}
        AND expires_at > (extract(epoch from clock_timestamp()) * 1000)::bigint)
    RETURNING id`.execute(db);
  return rows.length > 0;
}

/** The oldest deliveries queued for `account`, at most `limit`. */
export async function inboxFor(db: Kysely<Database>, account: string, limit: number): Promise<InboxItem[]> {
  const rows = await db.selectFrom('webhook_inbox').select(['id', 'received_at', 'payload']).where('account', '=', account).orderBy('id').limit(limit).execute();
  return rows.map((r) => ({ id: Number(r.id), received_at: Number(r.received_at), payload: r.payload }));
}

/** Deletes an applied delivery (in the transaction that applied it). */
export async function deleteInboxItem(db: Kysely<Database>, id: number): Promise<void> {
  await db.deleteFrom('webhook_inbox').where('id', '=', id).execute();
}

/**
 * The accounts with deliveries queued, and whether an instance holds each now (by the
 * database's clock): what the holders' periodic look drains, and what any instance applies
 * when nobody does (an account handed over and not yet taken, or taken out of every
 * instance's `accounts:` with deliveries still queued).
 */
export async function inboxAccounts(db: Kysely<Database>): Promise<{ account: string; held: boolean }[]> {
  if (!isPostgres(db)) return []; // nothing is queued where one daemon holds every account
  const { rows } = await sql<{ account: string; held: boolean }>`
    SELECT q.account, coalesce(l.holder IS NOT NULL AND l.expires_at > (extract(epoch from clock_timestamp()) * 1000)::bigint, false) AS held
    FROM (SELECT DISTINCT account FROM webhook_inbox) q LEFT JOIN account_leases l ON l.account = q.account`.execute(db);
  return rows.map((r) => ({ account: r.account, held: Boolean(r.held) }));
}
