import { sql, type Kysely } from 'kysely';
import { isPostgres } from './dialect.js';
import type { Database } from './types.js';

// `campaignd store copy`: every row of one store into another, typically an existing SQLite
// file into a new PostgreSQL database (docs/design.md §10). Both are at the same schema version
// (the caller migrates them), so a row copies column for column.
//
// The copy is one transaction on the target: it either holds everything or nothing. The
// target's own triggers are switched off meanwhile: the counters (0002) and the hook outbox
// (0007) are copied as they are instead of being recomputed by every inserted row, which
// would also queue events for changes that happened long ago. SQLite cannot switch its
// triggers off: into a SQLite target the counters are left to its triggers, and the hook
// subscriptions are copied last, so that no inserted row finds a subscriber to notify.

/** Tables in an order that satisfies every foreign key; the schema bookkeeping is the caller's. */
export const COPY_ORDER = [
  'campaigns',
  'leads',
  'lead_contacts',
  'attempts',
  'call_results',
  'events',
  'suppressions',
  'daemons',
  'lead_counts',
  'attempt_counts',
  // the budgets' spending (0028) and the per-variant figures (0031), copied as they are like the counters above
  'campaign_spend',
  'lead_variant_figures',
  'variant_counts',
  // the success_when judgments' sums (0035), the same way
  'variant_successes',
  'hook_subscriptions',
  'hook_outbox',
  'hook_states',
  'ha_lease',
  // The API's keys move with the store, so clients keep working on the new database (and
  // a loopback API does not open up for want of keys). Dashboard sessions are not copied:
  // signing in again is cheap.
  'api_keys',
  // answers under an Idempotency-Key: a client's retry after the move still finds its answer
  'api_idempotency',
] as const satisfies readonly (keyof Database)[];

/** Tables whose `id` comes from a sequence on PostgreSQL, to be moved past the copied ids. */
const ID_TABLES = new Set<string>(['campaigns', 'leads', 'attempts', 'events', 'hook_outbox', 'api_keys']);

/** Tables a SQLite target's triggers fill from the copied rows (checked: their `n` add up). */
const TRIGGER_KEPT = new Set<string>(['lead_counts', 'attempt_counts']);
/** Tables a SQLite target's triggers fill too, not copied there. */
const SQLITE_TRIGGER_FILLED = new Set<string>([...TRIGGER_KEPT, 'campaign_spend', 'lead_variant_figures', 'variant_counts', 'variant_successes']);

/** PostgreSQL accepts at most 65,535 bound parameters in one statement. */
const MAX_PARAMETERS = 60_000;

export interface CopyProgress {
  table: string;
  rows: number;
}

/** Thrown when the target already holds data: a copy never merges into an existing store. */
export class TargetNotEmptyError extends Error {
  constructor(readonly table: string) {
    super(`the target database already holds rows in "${table}": copy into an empty database`);
    this.name = 'TargetNotEmptyError';
  }
}

/** Copies every table of `from` into `to`; returns the rows copied per table, after checking the counts. */
export async function copyStore(from: Kysely<Database>, to: Kysely<Database>, onProgress: (p: CopyProgress) => void = () => undefined): Promise<CopyProgress[]> {
  const source = from as unknown as Kysely<any>;
  for (const table of COPY_ORDER) {
    if ((await countRows(to as unknown as Kysely<any>, table)) > 0) throw new TargetNotEmptyError(table);
  }
  const columnsOf = new Map((await source.introspection.getTables()).map((t) => [t.name, t.columns.map((c) => c.name)]));
  const pg = isPostgres(to);
  const order: readonly string[] = pg ? COPY_ORDER : [...COPY_ORDER.filter((t) => !SQLITE_TRIGGER_FILLED.has(t) && t !== 'hook_subscriptions'), 'hook_subscriptions'];
  return to.transaction().execute(async (trx) => {
    const target = trx as unknown as Kysely<any>;
    if (pg) for (const table of COPY_ORDER) await sql`ALTER TABLE ${sql.table(table)} DISABLE TRIGGER USER`.execute(target);
    const copied: CopyProgress[] = [];
    for (const table of order) {
      const columns = columnsOf.get(table);
      if (!columns) throw new Error(`the source database has no table "${table}": is it a campaignd store?`);
      const batch = Math.max(1, Math.floor(MAX_PARAMETERS / columns.length));
      let rows = 0;
      let pending: Record<string, unknown>[] = [];
      const flush = async () => {
        if (pending.length === 0) return;
        await target.insertInto(table).values(pending).execute();
        rows += pending.length;
        pending = [];
        onProgress({ table, rows });
      };
      // Streamed in the source's storage order: memory stays flat at a million leads.
      for await (const row of source.selectFrom(table).select(columns).stream(1_000)) {
        pending.push(row as Record<string, unknown>);
        if (pending.length >= batch) await flush();
      }
      await flush();
      const expected = await countRows(source, table);
      const written = await countRows(target, table);
      if (written !== expected) throw new Error(`copy of "${table}" wrote ${written} rows of ${expected}; nothing was kept`);
      if (pg && ID_TABLES.has(table)) {
        await sql`SELECT setval(pg_get_serial_sequence(${table}, 'id'), (SELECT coalesce(max(id), 0) + 1 FROM ${sql.table(table)}), false)`.execute(target);
      }
      copied.push({ table, rows });
    }
    for (const table of pg ? [] : TRIGGER_KEPT) {
      // Rows whose count fell to 0 stay in the source; the sum is what status reads.
      if ((await sumN(target, table)) !== (await sumN(source, table))) throw new Error(`the target's "${table}" does not add up to the source's; nothing was kept`);
    }
    if (pg) for (const table of COPY_ORDER) await sql`ALTER TABLE ${sql.table(table)} ENABLE TRIGGER USER`.execute(target);
    return copied;
  });
}

async function countRows(db: Kysely<any>, table: string): Promise<number> {
  const row = await db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

async function sumN(db: Kysely<any>, table: string): Promise<number> {
  const row = await db.selectFrom(table).select((eb) => eb.fn.sum<number>('n').as('n')).executeTakeFirstOrThrow();
  return Number(row.n ?? 0);
}
