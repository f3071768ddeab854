import type { Kysely } from 'kysely';
import type { HookEventType } from './results-hook-types.js';
import type { Database } from './types.js';

// The hook tables (migrations/0007_hooks.ts): subscriptions written from the
// config, the outbox the triggers fill, and the hooks disabled by a 410.

export interface HookConfigEntry {
  url: string;
  events: readonly HookEventType[];
}

/**
 * Makes hook_subscriptions match the config (hooks disabled by a 410 stay unsubscribed);
 * forgets the 410 and drops the undelivered events of hooks no longer configured (nothing
 * would ever send them). Returns how many events were dropped.
 */
export async function syncHookSubscriptions(db: Kysely<Database>, hooks: readonly HookConfigEntry[]): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const urls = hooks.map((h) => h.url);
    await trx.deleteFrom('hook_subscriptions').execute();
    let orphans = trx.deleteFrom('hook_outbox');
    if (urls.length > 0) {
      await trx.deleteFrom('hook_states').where('hook_url', 'not in', urls).execute();
      orphans = orphans.where('hook_url', 'not in', urls);
    } else {
      await trx.deleteFrom('hook_states').execute();
    }
    const dropped = Number((await orphans.executeTakeFirst()).numDeletedRows);
    const disabled = new Set((await trx.selectFrom('hook_states').select('hook_url').where('disabled_at', 'is not', null).execute()).map((r) => r.hook_url));
    const rows = hooks.filter((h) => !disabled.has(h.url)).flatMap((h) => [...new Set(h.events)].map((type) => ({ hook_url: h.url, type })));
    if (rows.length > 0) await trx.insertInto('hook_subscriptions').values(rows).execute();
    return dropped;
  });
}

/** The hooks a 410 disabled (the sender skips them from the start). */
export async function disabledHookUrls(db: Kysely<Database>): Promise<string[]> {
  const rows = await db.selectFrom('hook_states').select('hook_url').where('disabled_at', 'is not', null).execute();
  return rows.map((r) => r.hook_url);
}

/** The oldest undelivered events of a hook, in delivery order. */
export async function pendingEvents(db: Kysely<Database>, hookUrl: string, limit: number) {
  return db
    .selectFrom('hook_outbox')
    .select(['id', 'event_id', 'type', 'lead_id', 'created_at', 'body', 'tries', 'next_try_at'])
    .where('hook_url', '=', hookUrl)
    .orderBy('id')
    .limit(limit)
    .execute();
}

/** Removes delivered (or dropped) events. */
export async function removeEvents(db: Kysely<Database>, ids: readonly number[]): Promise<void> {
  for (let i = 0; i < ids.length; i += 500) await db.deleteFrom('hook_outbox').where('id', 'in', ids.slice(i, i + 500)).execute();
}

/** Records a failed try and when to try again. */
export async function deferEvent(db: Kysely<Database>, id: number, nextTryAt: number, error: string): Promise<void> {
  await db.updateTable('hook_outbox').set((eb) => ({ tries: eb('tries', '+', 1), next_try_at: nextTryAt, last_error: error.slice(0, 500) })).where('id', '=', id).execute();
}

/** A 410: the hook is disabled, unsubscribed, and its undelivered events are dropped; returns how many. */
export async function disableHook(db: Kysely<Database>, hookUrl: string, reason: string, now: number): Promise<number> {
  return db.transaction().execute(async (trx) => {
    await trx
      .insertInto('hook_states')
      .values({ hook_url: hookUrl, disabled_at: now, disabled_reason: reason })
      .onConflict((oc) => oc.column('hook_url').doUpdateSet({ disabled_at: now, disabled_reason: reason }))
      .execute();
    await trx.deleteFrom('hook_subscriptions').where('hook_url', '=', hookUrl).execute();
    const dropped = await trx.deleteFrom('hook_outbox').where('hook_url', '=', hookUrl).executeTakeFirst();
    return Number(dropped.numDeletedRows);
  });
}

/** Per hook: undelivered events, the oldest one's creation, failed tries so far, and whether a 410 disabled it. */
export interface HookBacklog {
  url: string;
  backlog: number;
  oldestCreatedAt: number | null;
  failing: number;
  disabledAt: number | null;
  disabledReason: string | null;
}

/** The backlog of every hook that has one or is disabled (status, metrics). */
export async function hookBacklogs(db: Kysely<Database>): Promise<HookBacklog[]> {
  const rows = await db
    .selectFrom('hook_outbox')
    .select((eb) => ['hook_url', eb.fn.countAll<number>().as('n'), eb.fn.min('created_at').as('oldest'), eb.fn.sum<number>(eb.case().when('tries', '>', 0).then(1).else(0).end()).as('failing')])
    .groupBy('hook_url')
    .execute();
  const states = await db.selectFrom('hook_states').selectAll().execute();
  const out = new Map<string, HookBacklog>();
  for (const r of rows) out.set(r.hook_url, { url: r.hook_url, backlog: Number(r.n), oldestCreatedAt: r.oldest === null ? null : Number(r.oldest), failing: Number(r.failing ?? 0), disabledAt: null, disabledReason: null });
  for (const s of states) {
    const b = out.get(s.hook_url) ?? { url: s.hook_url, backlog: 0, oldestCreatedAt: null, failing: 0, disabledAt: null, disabledReason: null };
    b.disabledAt = s.disabled_at;
    b.disabledReason = s.disabled_reason;
    out.set(s.hook_url, b);
  }
  return [...out.values()].sort((a, b) => a.url.localeCompare(b.url));
}
