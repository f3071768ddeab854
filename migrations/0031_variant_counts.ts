import { sql, type Kysely } from 'kysely';
import { integer, isPostgres } from './dialect.js';

// Frozen in time: never edit a migration that has shipped; add a new one instead.
//
// `campaignd status` showed each variant's figures (README, "Assistant variants": leads given
// it, ended counted calls, leads called, leads reached, cost) from grouped reads over every
// ended attempt of the campaign: 2.6–3.0 s for 100 campaigns at 1M leads. The database now
// keeps them itself, as 0002 keeps the lead counts and 0028 the spending, kept right by
// triggers on leads, attempts and call_results, so every path that writes them (the claim's
// variant, an outcome set or re-set from provisional to confirmed, a withdrawal that is not
// counted, a late cost, a deleted lead, a cascade, an operator's SQL) keeps them without
// knowing they exist:
//  - lead_variant_figures: one row per lead holding a variant, its own figures recomputed
//    from its attempts whenever one of them, its result's cost or the lead's variant changes
//    (a lead has few attempts, read through attempts_lead), so each row is what a recount of
//    that lead finds. "Leads called" and "leads reached" count leads, not calls: a lead's
//    second call must not count it twice, and a variant removed from the file moves the
//    lead (settleLeadVariants) with everything it had; the per-lead row makes both exact.
//  - variant_counts: the sums of those rows per (campaign, variant), moved by the difference
//    between a lead's old and new row. The row of variant '' holds the campaign's sum.
//
// Lock order on PostgreSQL: every change of a campaign's sums takes its '' row first, then
// the variant rows (as 0028 takes the total then the bucket), so writers of one campaign
// queue on that row and never lock two variant rows in opposite orders. Across tables a
// transaction writes call_results (0028's rows, then these: triggers of one event fire in
// name order, call_results_spend_* before call_results_variant_*), then attempts (these),
// then leads (0002's lead_counts); nothing writes them the other way round.

/** A lead's figures from its ended, counted attempts (`id`: an expression naming the lead). */
const figuresOf = (id: string): string => `(SELECT count(*) AS calls, coalesce(max(CASE WHEN a.outcome = 'success' THEN 1 ELSE 0 END), 0) AS reached,
      coalesce(sum(r.cost), 0) AS cost
    FROM attempts a LEFT JOIN call_results r ON r.attempt_id = a.id
    WHERE a.lead_id = ${id} AND a.outcome IS NOT NULL AND a.counted = 1) f`;

/**
 * Recomputes one lead's row of lead_variant_figures; an unchanged row is not written.
 * `only`: a condition for doing it at all (a trigger's second lead, when it is another one).
 */
function refresh(id: string, only = 'TRUE'): string {
  return `
    DELETE FROM lead_variant_figures WHERE ${only} AND lead_id = ${id} AND NOT EXISTS (SELECT 1 FROM leads WHERE id = ${id} AND variant IS NOT NULL);
    INSERT INTO lead_variant_figures (lead_id, campaign_id, variant, calls, reached, cost)
      SELECT l.id, l.campaign_id, l.variant, f.calls, f.reached, f.cost FROM leads l, ${figuresOf(id)}
      WHERE ${only} AND l.id = ${id} AND l.variant IS NOT NULL
      ON CONFLICT (lead_id) DO UPDATE SET campaign_id = excluded.campaign_id, variant = excluded.variant,
        calls = excluded.calls, reached = excluded.reached, cost = excluded.cost
      WHERE lead_variant_figures.campaign_id <> excluded.campaign_id OR lead_variant_figures.variant <> excluded.variant
        OR lead_variant_figures.calls <> excluded.calls OR lead_variant_figures.reached <> excluded.reached OR lead_variant_figures.cost <> excluded.cost;`;
}

/** Adds a lead's row `r` (NEW) to its campaign's sum, then to its variant's. */
function add(r: string): string {
  const upsert = (variant: string) => `INSERT INTO variant_counts (campaign_id, variant, leads, calls, called_leads, reached_leads, cost)
      VALUES (${r}.campaign_id, ${variant}, 1, ${r}.calls, CASE WHEN ${r}.calls > 0 THEN 1 ELSE 0 END, ${r}.reached, ${r}.cost)
      ON CONFLICT (campaign_id, variant) DO UPDATE SET leads = variant_counts.leads + 1, calls = variant_counts.calls + excluded.calls,
        called_leads = variant_counts.called_leads + excluded.called_leads, reached_leads = variant_counts.reached_leads + excluded.reached_leads,
        cost = variant_counts.cost + excluded.cost;`;
  return `${upsert(`''`)} ${upsert(`${r}.variant`)}`;
}

/** Takes a lead's row `r` (OLD) from its campaign's sum, then from its variant's. */
function remove(r: string): string {
  const update = (variant: string) => `UPDATE variant_counts SET leads = leads - 1, calls = calls - ${r}.calls,
      called_leads = called_leads - CASE WHEN ${r}.calls > 0 THEN 1 ELSE 0 END, reached_leads = reached_leads - ${r}.reached, cost = cost - ${r}.cost
    WHERE campaign_id = ${r}.campaign_id AND variant = ${variant};`;
  return `${update(`''`)} ${update(`${r}.variant`)}`;
}

const SAME_KEY = 'OLD.campaign_id = NEW.campaign_id AND OLD.variant = NEW.variant';

/** A lead's row changed in place (same campaign and variant, the usual case): the differences, total then variant. */
function shift(): string {
  const update = (variant: string) => `UPDATE variant_counts SET calls = calls + (NEW.calls - OLD.calls),
      called_leads = called_leads + (CASE WHEN NEW.calls > 0 THEN 1 ELSE 0 END) - (CASE WHEN OLD.calls > 0 THEN 1 ELSE 0 END),
      reached_leads = reached_leads + (NEW.reached - OLD.reached), cost = cost + (NEW.cost - OLD.cost)
    WHERE campaign_id = NEW.campaign_id AND variant = ${variant};`;
  return `${update(`''`)} ${update('NEW.variant')}`;
}

/** The lead of the attempt a call result belongs to. */
const leadOfResult = (r: string): string => `(SELECT lead_id FROM attempts WHERE id = ${r}.attempt_id)`;

export async function up(db: Kysely<any>): Promise<void> {
  const int = integer(db);
  // No foreign keys, as 0002's and 0028's counters: a counter must never make a write fail.
  await db.schema
    .createTable('lead_variant_figures')
    .addColumn('lead_id', int, (c) => c.primaryKey())
    .addColumn('campaign_id', int, (c) => c.notNull())
    .addColumn('variant', 'text', (c) => c.notNull())
    .addColumn('calls', int, (c) => c.notNull())
    .addColumn('reached', int, (c) => c.notNull())
    .addColumn('cost', 'double precision', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('variant_counts')
    .addColumn('campaign_id', int, (c) => c.notNull())
    .addColumn('variant', 'text', (c) => c.notNull())
    .addColumn('leads', int, (c) => c.notNull())
    .addColumn('calls', int, (c) => c.notNull())
    .addColumn('called_leads', int, (c) => c.notNull())
    .addColumn('reached_leads', int, (c) => c.notNull())
    .addColumn('cost', 'double precision', (c) => c.notNull())
    .addPrimaryKeyConstraint('variant_counts_pk', ['campaign_id', 'variant'])
    .execute();

  // Backfill in the migration's transaction, which holds the write lock, before the
  // triggers exist: each lead's row in one grouped pass over the ended attempts (not a
  // lookup per lead), then their sums.
  await sql`
    INSERT INTO lead_variant_figures (lead_id, campaign_id, variant, calls, reached, cost)
    SELECT l.id, l.campaign_id, l.variant, coalesce(f.calls, 0), coalesce(f.reached, 0), coalesce(f.cost, 0)
    FROM leads l LEFT JOIN (
      SELECT a.lead_id, count(*) AS calls, max(CASE WHEN a.outcome = 'success' THEN 1 ELSE 0 END) AS reached, coalesce(sum(r.cost), 0) AS cost
      FROM attempts a LEFT JOIN call_results r ON r.attempt_id = a.id
      WHERE a.outcome IS NOT NULL AND a.counted = 1 GROUP BY a.lead_id
    ) f ON f.lead_id = l.id
    WHERE l.variant IS NOT NULL`.execute(db);
  await sql`
    INSERT INTO variant_counts (campaign_id, variant, leads, calls, called_leads, reached_leads, cost)
    SELECT campaign_id, variant, count(*), sum(calls), sum(CASE WHEN calls > 0 THEN 1 ELSE 0 END), sum(reached), sum(cost)
    FROM lead_variant_figures GROUP BY campaign_id, variant`.execute(db);
  await sql`
    INSERT INTO variant_counts (campaign_id, variant, leads, calls, called_leads, reached_leads, cost)
    SELECT campaign_id, '', sum(leads), sum(calls), sum(called_leads), sum(reached_leads), sum(cost)
    FROM variant_counts GROUP BY campaign_id`.execute(db);

  if (isPostgres(db)) await createPostgresTriggers(db);
  else await createSqliteTriggers(db);
}

/**
 * Whether lead `id` has figures to keep: a variant now, or a row from before (its variant
 * just removed). Most leads have none (campaigns without variants): their calls' outcomes
 * and costs then skip the recount altogether, so the counters cost plain campaigns only
 * this lookup.
 */
const tracked = (id: string): string =>
  `(EXISTS (SELECT 1 FROM leads WHERE id = ${id} AND variant IS NOT NULL) OR EXISTS (SELECT 1 FROM lead_variant_figures WHERE lead_id = ${id}))`;

/** What changes a lead's figures, per table: the WHEN of each trigger (SQLite spells "distinct" IS NOT). */
function changes(distinct: string): Record<string, string> {
  const d = (col: string) => `OLD.${col} ${distinct} NEW.${col}`;
  return {
    leads: `${d('variant')} OR ${d('campaign_id')}`,
    attempts: `${d('outcome')} OR ${d('counted')} OR ${d('lead_id')}`,
    call_results: `${d('cost')} OR ${d('attempt_id')}`,
  };
}

async function createSqliteTriggers(db: Kysely<any>): Promise<void> {
  const changed = changes('IS NOT');
  const triggers: Record<string, string> = {
    lead_variant_figures_insert: `AFTER INSERT ON lead_variant_figures BEGIN ${add('NEW')} END`,
    lead_variant_figures_delete: `AFTER DELETE ON lead_variant_figures BEGIN ${remove('OLD')} END`,
    lead_variant_figures_update: `AFTER UPDATE ON lead_variant_figures WHEN ${SAME_KEY} BEGIN ${shift()} END`,
    lead_variant_figures_move: `AFTER UPDATE ON lead_variant_figures WHEN NOT (${SAME_KEY}) BEGIN ${remove('OLD')} ${add('NEW')} END`,
    leads_variant_insert: `AFTER INSERT ON leads WHEN NEW.variant IS NOT NULL BEGIN ${refresh('NEW.id')} END`,
    leads_variant_update: `AFTER UPDATE OF variant, campaign_id ON leads WHEN ${changed.leads} BEGIN ${refresh('NEW.id')} END`,
    leads_variant_delete: `AFTER DELETE ON leads WHEN OLD.variant IS NOT NULL BEGIN ${refresh('OLD.id')} END`,
    attempts_variant_insert: `AFTER INSERT ON attempts WHEN NEW.outcome IS NOT NULL AND ${tracked('NEW.lead_id')} BEGIN ${refresh('NEW.lead_id')} END`,
    attempts_variant_update: `AFTER UPDATE OF outcome, counted, lead_id ON attempts WHEN (${changed.attempts}) AND (${tracked('OLD.lead_id')} OR ${tracked('NEW.lead_id')})
      BEGIN ${refresh('OLD.lead_id')} ${refresh('NEW.lead_id', 'NEW.lead_id <> OLD.lead_id')} END`,
    attempts_variant_delete: `AFTER DELETE ON attempts WHEN OLD.outcome IS NOT NULL AND ${tracked('OLD.lead_id')} BEGIN ${refresh('OLD.lead_id')} END`,
    call_results_variant_insert: `AFTER INSERT ON call_results WHEN NEW.cost IS NOT NULL AND ${tracked(leadOfResult('NEW'))} BEGIN ${refresh(leadOfResult('NEW'))} END`,
    call_results_variant_update: `AFTER UPDATE OF cost, attempt_id ON call_results WHEN (${changed.call_results}) AND (${tracked(leadOfResult('OLD'))} OR ${tracked(leadOfResult('NEW'))})
      BEGIN ${refresh(leadOfResult('OLD'))} ${refresh(leadOfResult('NEW'), 'NEW.attempt_id <> OLD.attempt_id')} END`,
    call_results_variant_delete: `AFTER DELETE ON call_results WHEN OLD.cost IS NOT NULL AND ${tracked(leadOfResult('OLD'))} BEGIN ${refresh(leadOfResult('OLD'))} END`,
    campaigns_variant_counts_delete: `AFTER DELETE ON campaigns BEGIN
      DELETE FROM variant_counts WHERE campaign_id = OLD.id; DELETE FROM lead_variant_figures WHERE campaign_id = OLD.id; END`,
  };
  for (const [name, body] of Object.entries(triggers)) await sql.raw(`CREATE TRIGGER ${name} ${body}`).execute(db);
}

/** The same as row triggers on PostgreSQL; WHEN keeps imports (no variant) and claims (no outcome) off them. */
async function createPostgresTriggers(db: Kysely<any>): Promise<void> {
  const changed = changes('IS DISTINCT FROM');
  await sql.raw(`CREATE FUNCTION lead_variant_refresh(lid bigint) RETURNS void LANGUAGE plpgsql AS $$ BEGIN
      IF lid IS NULL OR NOT ${tracked('lid')} THEN RETURN; END IF;
      ${refresh('lid')}
    END $$`).execute(db);
  // A lead moved to another campaign: the lower campaign's rows first, so two such moves queue.
  await sql.raw(`CREATE FUNCTION lead_variant_figures_count() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
      IF TG_OP = 'UPDATE' AND ${SAME_KEY} THEN ${shift()} RETURN NULL; END IF;
      IF TG_OP = 'DELETE' OR (TG_OP = 'UPDATE' AND OLD.campaign_id <= NEW.campaign_id) THEN ${remove('OLD')} END IF;
      IF TG_OP <> 'DELETE' THEN ${add('NEW')} END IF;
      IF TG_OP = 'UPDATE' AND OLD.campaign_id > NEW.campaign_id THEN ${remove('OLD')} END IF;
      RETURN NULL; END $$`).execute(db);
  const fns: Record<string, string> = {
    leads_variant_refresh: `IF TG_OP = 'DELETE' THEN PERFORM lead_variant_refresh(OLD.id); ELSE PERFORM lead_variant_refresh(NEW.id); END IF;`,
    attempts_variant_refresh: `IF TG_OP <> 'INSERT' THEN PERFORM lead_variant_refresh(OLD.lead_id); END IF;
        IF TG_OP = 'INSERT' OR (TG_OP = 'UPDATE' AND OLD.lead_id IS DISTINCT FROM NEW.lead_id) THEN PERFORM lead_variant_refresh(NEW.lead_id); END IF;`,
    call_results_variant_refresh: `IF TG_OP <> 'INSERT' THEN PERFORM lead_variant_refresh(${leadOfResult('OLD')}); END IF;
        IF TG_OP = 'INSERT' OR (TG_OP = 'UPDATE' AND OLD.attempt_id IS DISTINCT FROM NEW.attempt_id) THEN PERFORM lead_variant_refresh(${leadOfResult('NEW')}); END IF;`,
    campaigns_variant_counts_delete: `DELETE FROM variant_counts WHERE campaign_id = OLD.id; DELETE FROM lead_variant_figures WHERE campaign_id = OLD.id;`,
  };
  for (const [name, body] of Object.entries(fns)) {
    await sql.raw(`CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN ${body} RETURN NULL; END $$`).execute(db);
  }
  const triggers: [string, string, string][] = [
    ['lead_variant_figures_count', 'AFTER INSERT OR UPDATE OR DELETE ON lead_variant_figures FOR EACH ROW', 'lead_variant_figures_count'],
    ['leads_variant_insert', 'AFTER INSERT ON leads FOR EACH ROW WHEN (NEW.variant IS NOT NULL)', 'leads_variant_refresh'],
    ['leads_variant_update', `AFTER UPDATE OF variant, campaign_id ON leads FOR EACH ROW WHEN (${changed.leads})`, 'leads_variant_refresh'],
    ['leads_variant_delete', 'AFTER DELETE ON leads FOR EACH ROW WHEN (OLD.variant IS NOT NULL)', 'leads_variant_refresh'],
    ['attempts_variant_insert', 'AFTER INSERT ON attempts FOR EACH ROW WHEN (NEW.outcome IS NOT NULL)', 'attempts_variant_refresh'],
    ['attempts_variant_update', `AFTER UPDATE OF outcome, counted, lead_id ON attempts FOR EACH ROW WHEN (${changed.attempts})`, 'attempts_variant_refresh'],
    ['attempts_variant_delete', 'AFTER DELETE ON attempts FOR EACH ROW WHEN (OLD.outcome IS NOT NULL)', 'attempts_variant_refresh'],
    ['call_results_variant_insert', 'AFTER INSERT ON call_results FOR EACH ROW WHEN (NEW.cost IS NOT NULL)', 'call_results_variant_refresh'],
    ['call_results_variant_update', `AFTER UPDATE OF cost, attempt_id ON call_results FOR EACH ROW WHEN (${changed.call_results})`, 'call_results_variant_refresh'],
    ['call_results_variant_delete', 'AFTER DELETE ON call_results FOR EACH ROW WHEN (OLD.cost IS NOT NULL)', 'call_results_variant_refresh'],
    ['campaigns_variant_counts_delete', 'AFTER DELETE ON campaigns FOR EACH ROW', 'campaigns_variant_counts_delete'],
  ];
  for (const [name, when, fn] of triggers) await sql.raw(`CREATE TRIGGER ${name} ${when} EXECUTE FUNCTION ${fn}()`).execute(db);
}

const SQLITE_TRIGGERS = [
  'lead_variant_figures_insert',
  'lead_variant_figures_delete',
  'lead_variant_figures_update',
  'lead_variant_figures_move',
  'leads_variant_insert',
  'leads_variant_update',
  'leads_variant_delete',
  'attempts_variant_insert',
  'attempts_variant_update',
  'attempts_variant_delete',
  'call_results_variant_insert',
  'call_results_variant_update',
  'call_results_variant_delete',
  'campaigns_variant_counts_delete',
];

export async function down(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) {
    // CASCADE drops each function's triggers with it.
    for (const fn of ['lead_variant_figures_count()', 'leads_variant_refresh()', 'attempts_variant_refresh()', 'call_results_variant_refresh()', 'campaigns_variant_counts_delete()', 'lead_variant_refresh(bigint)']) {
      await sql.raw(`DROP FUNCTION IF EXISTS ${fn} CASCADE`).execute(db);
    }
  } else {
    for (const t of SQLITE_TRIGGERS) await sql.raw(`DROP TRIGGER IF EXISTS ${t}`).execute(db);
  }
  await db.schema.dropTable('variant_counts').ifExists().execute();
  await db.schema.dropTable('lead_variant_figures').ifExists().execute();
}
