import { sql, type Kysely, type RawBuilder } from 'kysely';
import { isPostgres } from './dialect.js';
import { upsertOnceMore } from './upsert-race.js';
import type { Database } from './types.js';

// One lease per account (several active instances; docs/several-instances.md): the account
// is dialed only by the instance holding its unexpired lease, and every claim for it carries
// the lease's fence (attempts.fence_account / fence_token), which the database checks
// against this row when the claim is written (migration 0023_account_leases). Each taking
// raises the fence by one, so a holder that lost the account cannot write a claim for it.
//
// Every write is one conditional statement on the row's holder, fence and expiry: two
// instances can never both hold an account, whatever they believe and however their
// requests interleave (PostgreSQL re-evaluates the condition on the row's newest version).
//
// Expiry is judged by the DATABASE's clock, as the one lease of lease.ts is: instances on
// several hosts then agree on when a lease ran out. `at` replaces it with a given instant;
// only tests on injected time pass one (the fencing trigger still reads the database's clock).

/** One account's lease as the store holds it. */
export interface AccountLease {
  account: string;
  /** null once released. */
  holder: string | null;
  fence: number;
  expires_at: number;
  taken_at: number;
  /** Held by someone and not expired. */
  live: boolean;
  /** Milliseconds until it expires (≤ 0: expired): comparable with the reader's own clock, whatever the database's says. */
  remaining_ms: number;
}

/** An instance taking part in sharing the accounts. */
export interface LeaseInstance {
  instance_id: string;
  joined_at: number;
  remaining_ms: number;
}

/** The instant leases are judged at: the given one, or the database's clock. */
export type LeaseAt = number | undefined;

function nowMs(db: Kysely<Database>, at: LeaseAt): RawBuilder<number> {
  if (at !== undefined) return sql<number>`cast(${Math.floor(at)} as bigint)`;
  return isPostgres(db)
    ? sql<number>`(extract(epoch from clock_timestamp()) * 1000)::bigint`
    : sql<number>`cast((julianday('now') - 2440587.5) * 86400000 as integer)`;
}

/**
 * Takes `account` for `holder` when nobody holds an unexpired lease on it: returns the new
 * fence, or null when another instance (or `holder` itself, under an older fence) holds it.
 */
export async function acquireAccountLease(
  db: Kysely<Database>,
  take: { account: string; holder: string; leaseMs: number; at?: LeaseAt },
): Promise<number | null> {
  // Two instances taking an account nobody has taken yet at one moment (upsert-race.ts).
  return upsertOnceMore(() => takeAccountLease(db, take));
}

async function takeAccountLease(db: Kysely<Database>, take: { account: string; holder: string; leaseMs: number; at?: LeaseAt }): Promise<number | null> {
  const now = nowMs(db, take.at);
  const row = await db
    .insertInto('account_leases')
    .values({ account: take.account, holder: take.holder, fence: 1, expires_at: sql<number>`${now} + ${take.leaseMs}`, taken_at: now })
    .onConflict((oc) =>
      oc
        .column('account')
        .doUpdateSet({
          holder: take.holder,
          fence: sql<number>`account_leases.fence + 1`,
          expires_at: sql<number>`${now} + ${take.leaseMs}`,
          taken_at: now,
        })
        .where(sql<boolean>`account_leases.holder is null or account_leases.expires_at <= ${now}`),
    )
    .returning('fence')
    .executeTakeFirst();
  return row ? Number(row.fence) : null;
}

/**
 * Extends the leases `holder` holds under the given fences, in one statement; returns the
 * accounts renewed. One missing from the answer was lost (expired, or taken by another).
 */
export async function renewAccountLeases(
  db: Kysely<Database>,
  renew: { holder: string; leases: readonly { account: string; fence: number }[]; leaseMs: number; at?: LeaseAt },
): Promise<Set<string>> {
  if (renew.leases.length === 0) return new Set();
  const now = nowMs(db, renew.at);
  const rows = await db
    .updateTable('account_leases')
    .set({ expires_at: sql<number>`${now} + ${renew.leaseMs}` })
    .where('holder', '=', renew.holder)
    .where(sql<boolean>`expires_at > ${now}`)
    .where((eb) => eb.or(renew.leases.map((l) => eb.and([eb('account', '=', l.account), eb('fence', '=', l.fence)]))))
    .returning('account')
    .execute();
  return new Set(rows.map((r) => r.account));
}

/**
 * Gives an account up (a handover, or a clean stop): another instance may take it at once.
 * The caller has stopped dialing the account and seen its make_call requests answered.
 * False when it was no longer `holder`'s under `fence`.
 */
export async function releaseAccountLease(db: Kysely<Database>, release: { account: string; holder: string; fence: number }): Promise<boolean> {
  const result = await db
    .updateTable('account_leases')
    .set({ holder: null, expires_at: 0 })
    .where('account', '=', release.account)
    .where('holder', '=', release.holder)
    .where('fence', '=', release.fence)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * Writes what `holder` has sent on each of these accounts in the last minute (ages in ms, as
 * its budgets count them), for whoever takes them next: at each renewal and before a
 * handover's release. Only rows it still holds under the given fences; one statement.
 */
export async function saveAccountRequests(
  db: Kysely<Database>,
  save: { holder: string; entries: readonly { account: string; fence: number; ages: readonly number[] }[]; at?: LeaseAt },
): Promise<void> {
  if (save.entries.length === 0) return;
  const now = nowMs(db, save.at);
  const json = sql<string>`case ${sql.join(
    save.entries.map((e) => sql`when account = ${e.account} then ${JSON.stringify(e.ages.map((a) => Math.round(a)))}`),
    sql` `,
  )} end`;
  await db
    .updateTable('account_leases')
    .set({ recent_requests: json, recent_requests_at: now })
    .where('holder', '=', save.holder)
    .where((eb) => eb.or(save.entries.map((e) => eb.and([eb('account', '=', e.account), eb('fence', '=', e.fence)]))))
    .execute();
}

/**
 * The requests the account's previous holders last wrote (saveAccountRequests), as ages in
 * ms now by the database's clock (so two instances' clocks need not agree); [] when none
 * were written, or what was written cannot be read.
 */
export async function readAccountRequests(db: Kysely<Database>, account: string, at?: LeaseAt): Promise<number[]> {
  const now = nowMs(db, at);
  const row = await db
    .selectFrom('account_leases')
    .select(['recent_requests', sql<number | string | null>`${now} - recent_requests_at`.as('elapsed')])
    .where('account', '=', account)
    .executeTakeFirst();
  if (!row?.recent_requests) return [];
  let ages: unknown;
  try {
    ages = JSON.parse(row.recent_requests);
  } catch {
    return [];
  }
  if (!Array.isArray(ages)) return [];
  const elapsed = Math.max(0, Number(row.elapsed ?? 0)) || 0;
  return ages.filter((a): a is number => typeof a === 'number' && Number.isFinite(a) && a >= 0).map((a) => a + elapsed);
}

/** Every account's lease, by account name. */
export async function readAccountLeases(db: Kysely<Database>, at?: LeaseAt): Promise<AccountLease[]> {
  const now = nowMs(db, at);
  const rows = await db
    .selectFrom('account_leases')
    .select(['account', 'holder', 'fence', 'expires_at', 'taken_at', sql<number>`expires_at - ${now}`.as('remaining_ms')])
    .orderBy('account')
    .execute();
  return rows.map((r) => {
    const remaining = Number(r.remaining_ms);
    return {
      account: r.account,
      holder: r.holder,
      fence: Number(r.fence),
      expires_at: Number(r.expires_at),
      taken_at: Number(r.taken_at),
      live: r.holder !== null && remaining > 0,
      remaining_ms: remaining,
    };
  });
}

/** Says that `instance` takes part in sharing the accounts for the next `leaseMs` (joining, or staying). */
export async function beatLeaseInstance(db: Kysely<Database>, beat: { instance: string; leaseMs: number; at?: LeaseAt }): Promise<void> {
  const now = nowMs(db, beat.at);
  await db
    .insertInto('lease_instances')
    .values({ instance_id: beat.instance, joined_at: now, expires_at: sql<number>`${now} + ${beat.leaseMs}` })
    .onConflict((oc) => oc.column('instance_id').doUpdateSet({ expires_at: sql<number>`${now} + ${beat.leaseMs}` }))
    .execute();
}

/** The instances taking part now (unexpired rows); rows expired long ago are deleted on the way. */
export async function liveLeaseInstances(db: Kysely<Database>, at?: LeaseAt): Promise<LeaseInstance[]> {
  const now = nowMs(db, at);
  // An hour is far beyond any lease: such a row is a crash's leftover nobody will renew.
  await db.deleteFrom('lease_instances').where(sql<boolean>`expires_at < ${now} - 3600000`).execute();
  const rows = await db
    .selectFrom('lease_instances')
    .select(['instance_id', 'joined_at', sql<number>`expires_at - ${now}`.as('remaining_ms')])
    .where(sql<boolean>`expires_at > ${now}`)
    .orderBy('instance_id')
    .execute();
  return rows.map((r) => ({ instance_id: r.instance_id, joined_at: Number(r.joined_at), remaining_ms: Number(r.remaining_ms) }));
}

/** Leaves the sharing at a clean stop (after every account was released): the others rebalance at once. */
export async function leaveLeaseInstances(db: Kysely<Database>, instance: string): Promise<void> {
  await db.deleteFrom('lease_instances').where('instance_id', '=', instance).execute();
}

/** Who dials each account now, for `status` (`accounts[].instance`, `pid`, `hostname`, `lease_expires_at`). */
export interface AccountHolding {
  account: string;
  /** The holder's instance id; null when nobody holds an unexpired lease (between a death and its takeover). */
  instance: string | null;
  /** From the holder's `daemons` row; null when it has none (or nobody holds the account). */
  pid: number | null;
  hostname: string | null;
  /** Epoch ms by the database's clock; null when nobody holds it. */
  lease_expires_at: number | null;
}

/** Every leased account with its live holder, joined to the holder's daemon row. */
export async function accountHoldings(db: Kysely<Database>, at?: LeaseAt): Promise<AccountHolding[]> {
  const now = nowMs(db, at);
  const rows = await db
    .selectFrom('account_leases as l')
    .leftJoin('daemons as d', (join) => join.onRef('d.instance_id', '=', 'l.holder').on(sql<boolean>`l.expires_at > ${now}`))
    .select(['l.account', 'l.holder', 'l.expires_at', 'd.pid', 'd.hostname', sql<number>`l.expires_at - ${now}`.as('remaining_ms')])
    .orderBy('l.account')
    .execute();
  return rows.map((r) => {
    const live = r.holder !== null && Number(r.remaining_ms) > 0;
    return {
      account: r.account,
      instance: live ? r.holder : null,
      pid: live && r.pid !== null ? Number(r.pid) : null,
      hostname: live ? (r.hostname ?? null) : null,
      lease_expires_at: live ? Number(r.expires_at) : null,
    };
  });
}
