import { sql, type Kysely } from 'kysely';
import { integer, isPostgres } from './dialect.js';
import * as m0031 from './0031_variant_counts.js';

// Frozen in time: never edit a migration that has shipped; add a new one instead.
//
// A campaign with assistant variants and `success_when` (README, "Assistant variants") counts
// a lead as a success when one of its reached calls extracted the rule's variable with one of
// the rule's values. The rule lives in the campaign's file and is judged in JS (trimmed,
// lower-cased Unicode text, which SQLite's ASCII lower/trim would not reproduce), so the
// database cannot judge it; `status` read and judged every reached call's variables (~1.4 s
// at 1M leads). Now whoever writes a result judges it once, in JS, and the database keeps the
// sums as 0031 keeps the other figures:
//  - call_results.success_rule / success_match: the judgment of the row's extracted_json and
//    the key of the rule it was judged under (NULL: not judged). A change of extracted_json
//    that does not come with a judgment clears the key (an operator's SQL): never a stale one.
//  - lead_variant_figures.success_rule / success: over the lead's counted reached calls with
//    extracted variables ("answered" calls), their common key ('' when they disagree or one
//    is not judged; NULL when it has none) and whether one of them matched.
//  - variant_counts.answered_leads: leads with an answered call, whatever the judgment.
//  - variant_successes: per (campaign, variant, key) the leads judged under that key and the
//    successes among them. `status` trusts a variant's successes only when the leads judged
//    under the file's key are all its answered leads; otherwise (a rule changed and not yet
//    judged again, a result written under the rule of before) it judges that campaign's calls
//    itself, as before: slower, never wrong.
// The rows of before are not judged: their leads start at '' until the daemon's first sync of
// the campaign judges its results (the rule is in the file, not here).
//
// The triggers are 0031's, recreated with the longer figures; the lock order is theirs:
// variant_counts' '' row, then the variant's row, then variant_successes' rows.

type Dialect = { distinct: string; same: string };
const SQLITE: Dialect = { distinct: 'IS NOT', same: 'IS' };
const POSTGRES: Dialect = { distinct: 'IS DISTINCT FROM', same: 'IS NOT DISTINCT FROM' };

/** The key an answered attempt's result gives (NULL for other attempts; '' when not judged). */
const ANSWERED_KEY = `CASE WHEN a.outcome = 'success' AND r.extracted_json IS NOT NULL THEN coalesce(r.success_rule, '') END`;
/** A lead's key: its answered results' common key, '' when they differ, NULL when it has none. */
const LEAD_KEY = `CASE WHEN min(${ANSWERED_KEY}) <> max(${ANSWERED_KEY}) THEN '' ELSE min(${ANSWERED_KEY}) END`;
const LEAD_SUCCESS = `CASE WHEN (${LEAD_KEY}) = '' THEN 0 ELSE coalesce(max(CASE WHEN ${ANSWERED_KEY} IS NOT NULL AND r.success_match = 1 THEN 1 ELSE 0 END), 0) END`;

/** A lead's figures from its ended, counted attempts (`id`: an expression naming the lead). */
const figuresOf = (id: string): string => `(SELECT count(*) AS calls, coalesce(max(CASE WHEN a.outcome = 'success' THEN 1 ELSE 0 END), 0) AS reached,
      coalesce(sum(r.cost), 0) AS cost, ${LEAD_KEY} AS success_rule, ${LEAD_SUCCESS} AS success
    FROM attempts a LEFT JOIN call_results r ON r.attempt_id = a.id
    WHERE a.lead_id = ${id} AND a.outcome IS NOT NULL AND a.counted = 1) f`;

/**
 * Recomputes one lead's row of lead_variant_figures; an unchanged row is not written.
 * `only`: a condition for doing it at all (a trigger's second lead, when it is another one).
 */
function refresh(d: Dialect, id: string, only = 'TRUE'): string {
  return `
    DELETE FROM lead_variant_figures WHERE ${only} AND lead_id = ${id} AND NOT EXISTS (SELECT 1 FROM leads WHERE id = ${id} AND variant IS NOT NULL);
    INSERT INTO lead_variant_figures (lead_id, campaign_id, variant, calls, reached, cost, success_rule, success)
      SELECT l.id, l.campaign_id, l.variant, f.calls, f.reached, f.cost, f.success_rule, f.success FROM leads l, ${figuresOf(id)}
      WHERE ${only} AND l.id = ${id} AND l.variant IS NOT NULL
      ON CONFLICT (lead_id) DO UPDATE SET campaign_id = excluded.campaign_id, variant = excluded.variant,
        calls = excluded.calls, reached = excluded.reached, cost = excluded.cost, success_rule = excluded.success_rule, success = excluded.success
      WHERE lead_variant_figures.campaign_id <> excluded.campaign_id OR lead_variant_figures.variant <> excluded.variant
        OR lead_variant_figures.calls <> excluded.calls OR lead_variant_figures.reached <> excluded.reached OR lead_variant_figures.cost <> excluded.cost
        OR lead_variant_figures.success_rule ${d.distinct} excluded.success_rule OR lead_variant_figures.success <> excluded.success;`;
}

const answered = (r: string): string => `CASE WHEN ${r}.success_rule IS NOT NULL THEN 1 ELSE 0 END`;

/** Adds lead row `r`'s judgment to its (campaign, variant, key) row, when it has one; `when`: a further condition. */
function addSuccess(r: string, when = 'TRUE'): string {
  return `INSERT INTO variant_successes (campaign_id, variant, success_rule, leads, successes)
      SELECT ${r}.campaign_id, ${r}.variant, ${r}.success_rule, 1, ${r}.success WHERE ${r}.success_rule IS NOT NULL AND ${when}
      ON CONFLICT (campaign_id, variant, success_rule) DO UPDATE SET leads = variant_successes.leads + 1, successes = variant_successes.successes + excluded.successes;`;
}

function removeSuccess(r: string, when = 'TRUE'): string {
  return `UPDATE variant_successes SET leads = leads - 1, successes = successes - ${r}.success
    WHERE campaign_id = ${r}.campaign_id AND variant = ${r}.variant AND success_rule = ${r}.success_rule AND ${when};`;
}

/** Adds a lead's row `r` (NEW) to its campaign's sum, then to its variant's, then to its judgment's. */
function add(r: string): string {
  const upsert = (variant: string) => `INSERT INTO variant_counts (campaign_id, variant, leads, calls, called_leads, reached_leads, cost, answered_leads)
      VALUES (${r}.campaign_id, ${variant}, 1, ${r}.calls, CASE WHEN ${r}.calls > 0 THEN 1 ELSE 0 END, ${r}.reached, ${r}.cost, ${answered(r)})
      ON CONFLICT (campaign_id, variant) DO UPDATE SET leads = variant_counts.leads + 1, calls = variant_counts.calls + excluded.calls,
        called_leads = variant_counts.called_leads + excluded.called_leads, reached_leads = variant_counts.reached_leads + excluded.reached_leads,
        cost = variant_counts.cost + excluded.cost, answered_leads = variant_counts.answered_leads + excluded.answered_leads;`;
  return `${upsert(`''`)} ${upsert(`${r}.variant`)} ${addSuccess(r)}`;
}

/** Takes a lead's row `r` (OLD) from its campaign's sum, then from its variant's, then from its judgment's. */
function remove(r: string): string {
  const update = (variant: string) => `UPDATE variant_counts SET leads = leads - 1, calls = calls - ${r}.calls,
      called_leads = called_leads - CASE WHEN ${r}.calls > 0 THEN 1 ELSE 0 END, reached_leads = reached_leads - ${r}.reached, cost = cost - ${r}.cost,
      answered_leads = answered_leads - ${answered(r)}
    WHERE campaign_id = ${r}.campaign_id AND variant = ${variant};`;
  return `${update(`''`)} ${update(`${r}.variant`)} ${removeSuccess(r)}`;
}

const SAME_KEY = 'OLD.campaign_id = NEW.campaign_id AND OLD.variant = NEW.variant';

/** A lead's row changed in place (same campaign and variant, the usual case): the differences, total then variant, then the judgment if it changed. */
function shift(d: Dialect): string {
  const update = (variant: string) => `UPDATE variant_counts SET calls = calls + (NEW.calls - OLD.calls),
      called_leads = called_leads + (CASE WHEN NEW.calls > 0 THEN 1 ELSE 0 END) - (CASE WHEN OLD.calls > 0 THEN 1 ELSE 0 END),
      reached_leads = reached_leads + (NEW.reached - OLD.reached), cost = cost + (NEW.cost - OLD.cost),
      answered_leads = answered_leads + ${answered('NEW')} - ${answered('OLD')}
    WHERE campaign_id = NEW.campaign_id AND variant = ${variant};`;
  const judged = `(OLD.success_rule ${d.distinct} NEW.success_rule OR OLD.success <> NEW.success)`;
  return `${update(`''`)} ${update('NEW.variant')} ${removeSuccess('OLD', judged)} ${addSuccess('NEW', judged)}`;
}

/** The lead of the attempt a call result belongs to. */
const leadOfResult = (r: string): string => `(SELECT lead_id FROM attempts WHERE id = ${r}.attempt_id)`;

/**
 * Whether lead `id` has figures to keep: a variant now, or a row from before (its variant
 * just removed). Campaigns without variants pay only this lookup.
 */
const tracked = (id: string): string =>
  `(EXISTS (SELECT 1 FROM leads WHERE id = ${id} AND variant IS NOT NULL) OR EXISTS (SELECT 1 FROM lead_variant_figures WHERE lead_id = ${id}))`;

/** What changes a lead's figures, per table: the WHEN of each trigger. */
function changes(d: Dialect): Record<string, string> {
  const c = (col: string) => `OLD.${col} ${d.distinct} NEW.${col}`;
  return {
    leads: `${c('variant')} OR ${c('campaign_id')}`,
    attempts: `${c('outcome')} OR ${c('counted')} OR ${c('lead_id')}`,
    // extracted_json counts by being there or not; its text by its judgment (success_*).
    call_results: `${c('cost')} OR ${c('attempt_id')} OR (OLD.extracted_json IS NULL) <> (NEW.extracted_json IS NULL) OR ${c('success_rule')} OR ${c('success_match')}`,
  };
}

/** extracted_json rewritten by something that did not judge it (same key and match kept): not judged any more. */
const UNJUDGED_REWRITE = (d: Dialect): string =>
  `OLD.extracted_json ${d.distinct} NEW.extracted_json AND NEW.extracted_json IS NOT NULL AND NEW.success_rule IS NOT NULL
   AND OLD.success_rule ${d.same} NEW.success_rule AND OLD.success_match ${d.same} NEW.success_match`;

const RESULT_FIGURES = (r: string): string => `${r}.cost IS NOT NULL OR ${r}.extracted_json IS NOT NULL`;
const RESULT_COLUMNS = 'cost, attempt_id, extracted_json, success_rule, success_match';

export async function up(db: Kysely<any>): Promise<void> {
  const int = integer(db);
  const pg = isPostgres(db);
  // 0031's triggers go first: the backfill below must not run them row by row.
  await drop0031Triggers(db);
  await db.schema.alterTable('call_results').addColumn('success_rule', 'text').execute();
  await db.schema.alterTable('call_results').addColumn('success_match', int).execute();
  await db.schema.alterTable('lead_variant_figures').addColumn('success_rule', 'text').execute();
  await db.schema.alterTable('lead_variant_figures').addColumn('success', int, (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('variant_counts').addColumn('answered_leads', int, (c) => c.notNull().defaultTo(0)).execute();
  // No foreign keys, as 0031's counters: a counter must never make a write fail.
  await db.schema
    .createTable('variant_successes')
    .addColumn('campaign_id', int, (c) => c.notNull())
    .addColumn('variant', 'text', (c) => c.notNull())
    .addColumn('success_rule', 'text', (c) => c.notNull())
    .addColumn('leads', int, (c) => c.notNull())
    .addColumn('successes', int, (c) => c.notNull())
    .addPrimaryKeyConstraint('variant_successes_pk', ['campaign_id', 'variant', 'success_rule'])
    .execute();

  // Backfill: no result is judged yet, so every lead with an answered call is at ''.
  await sql`
    UPDATE lead_variant_figures SET success_rule = '' WHERE lead_id IN (
      SELECT a.lead_id FROM attempts a JOIN call_results r ON r.attempt_id = a.id
      WHERE a.outcome = 'success' AND a.counted = 1 AND r.extracted_json IS NOT NULL)`.execute(db);
  await sql`
    INSERT INTO variant_successes (campaign_id, variant, success_rule, leads, successes)
    SELECT campaign_id, variant, success_rule, count(*), sum(success) FROM lead_variant_figures
    WHERE success_rule IS NOT NULL GROUP BY campaign_id, variant, success_rule`.execute(db);
  await sql`
    UPDATE variant_counts SET answered_leads = coalesce((SELECT sum(s.leads) FROM variant_successes s
      WHERE s.campaign_id = variant_counts.campaign_id AND (variant_counts.variant = '' OR s.variant = variant_counts.variant)), 0)`.execute(db);

  if (pg) await createPostgresTriggers(db);
  else await createSqliteTriggers(db);
}

async function createSqliteTriggers(db: Kysely<any>): Promise<void> {
  const d = SQLITE;
  const changed = changes(d);
  const triggers: Record<string, string> = {
    lead_variant_figures_insert: `AFTER INSERT ON lead_variant_figures BEGIN ${add('NEW')} END`,
    lead_variant_figures_delete: `AFTER DELETE ON lead_variant_figures BEGIN ${remove('OLD')} END`,
    lead_variant_figures_update: `AFTER UPDATE ON lead_variant_figures WHEN ${SAME_KEY} BEGIN ${shift(d)} END`,
    lead_variant_figures_move: `AFTER UPDATE ON lead_variant_figures WHEN NOT (${SAME_KEY}) BEGIN ${remove('OLD')} ${add('NEW')} END`,
    leads_variant_insert: `AFTER INSERT ON leads WHEN NEW.variant IS NOT NULL BEGIN ${refresh(d, 'NEW.id')} END`,
    leads_variant_update: `AFTER UPDATE OF variant, campaign_id ON leads WHEN ${changed.leads} BEGIN ${refresh(d, 'NEW.id')} END`,
    leads_variant_delete: `AFTER DELETE ON leads WHEN OLD.variant IS NOT NULL BEGIN ${refresh(d, 'OLD.id')} END`,
    attempts_variant_insert: `AFTER INSERT ON attempts WHEN NEW.outcome IS NOT NULL AND ${tracked('NEW.lead_id')} BEGIN ${refresh(d, 'NEW.lead_id')} END`,
    attempts_variant_update: `AFTER UPDATE OF outcome, counted, lead_id ON attempts WHEN (${changed.attempts}) AND (${tracked('OLD.lead_id')} OR ${tracked('NEW.lead_id')})
      BEGIN ${refresh(d, 'OLD.lead_id')} ${refresh(d, 'NEW.lead_id', 'NEW.lead_id <> OLD.lead_id')} END`,
    attempts_variant_delete: `AFTER DELETE ON attempts WHEN OLD.outcome IS NOT NULL AND ${tracked('OLD.lead_id')} BEGIN ${refresh(d, 'OLD.lead_id')} END`,
    call_results_variant_insert: `AFTER INSERT ON call_results WHEN (${RESULT_FIGURES('NEW')}) AND ${tracked(leadOfResult('NEW'))} BEGIN ${refresh(d, leadOfResult('NEW'))} END`,
    call_results_variant_update: `AFTER UPDATE OF ${RESULT_COLUMNS} ON call_results WHEN (${changed.call_results}) AND (${tracked(leadOfResult('OLD'))} OR ${tracked(leadOfResult('NEW'))})
      BEGIN ${refresh(d, leadOfResult('OLD'))} ${refresh(d, leadOfResult('NEW'), 'NEW.attempt_id <> OLD.attempt_id')} END`,
    call_results_variant_delete: `AFTER DELETE ON call_results WHEN (${RESULT_FIGURES('OLD')}) AND ${tracked(leadOfResult('OLD'))} BEGIN ${refresh(d, leadOfResult('OLD'))} END`,
    // SQLite cannot change NEW: the row is updated again (that update fires the one above).
    call_results_unjudged_rewrite: `AFTER UPDATE OF extracted_json ON call_results WHEN ${UNJUDGED_REWRITE(d)}
      BEGIN UPDATE call_results SET success_rule = NULL WHERE attempt_id = NEW.attempt_id; END`,
    campaigns_variant_counts_delete: `AFTER DELETE ON campaigns BEGIN
      DELETE FROM variant_counts WHERE campaign_id = OLD.id; DELETE FROM variant_successes WHERE campaign_id = OLD.id;
      DELETE FROM lead_variant_figures WHERE campaign_id = OLD.id; END`,
  };
  for (const [name, body] of Object.entries(triggers)) await sql.raw(`CREATE TRIGGER ${name} ${body}`).execute(db);
}

/** The same as row triggers on PostgreSQL; WHEN keeps imports (no variant) and claims (no outcome) off them. */
async function createPostgresTriggers(db: Kysely<any>): Promise<void> {
  const d = POSTGRES;
  const changed = changes(d);
  await sql.raw(`CREATE FUNCTION lead_variant_refresh(lid bigint) RETURNS void LANGUAGE plpgsql AS $$ BEGIN
      IF lid IS NULL OR NOT ${tracked('lid')} THEN RETURN; END IF;
      ${refresh(d, 'lid')}
    END $$`).execute(db);
  // A lead moved to another campaign: the lower campaign's rows first, so two such moves queue.
  await sql.raw(`CREATE FUNCTION lead_variant_figures_count() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
      IF TG_OP = 'UPDATE' AND ${SAME_KEY} THEN ${shift(d)} RETURN NULL; END IF;
      IF TG_OP = 'DELETE' OR (TG_OP = 'UPDATE' AND OLD.campaign_id <= NEW.campaign_id) THEN ${remove('OLD')} END IF;
      IF TG_OP <> 'DELETE' THEN ${add('NEW')} END IF;
      IF TG_OP = 'UPDATE' AND OLD.campaign_id > NEW.campaign_id THEN ${remove('OLD')} END IF;
      RETURN NULL; END $$`).execute(db);
  await sql.raw(`CREATE FUNCTION call_results_unjudged_rewrite() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
      NEW.success_rule := NULL; RETURN NEW; END $$`).execute(db);
  const fns: Record<string, string> = {
    leads_variant_refresh: `IF TG_OP = 'DELETE' THEN PERFORM lead_variant_refresh(OLD.id); ELSE PERFORM lead_variant_refresh(NEW.id); END IF;`,
    attempts_variant_refresh: `IF TG_OP <> 'INSERT' THEN PERFORM lead_variant_refresh(OLD.lead_id); END IF;
        IF TG_OP = 'INSERT' OR (TG_OP = 'UPDATE' AND OLD.lead_id IS DISTINCT FROM NEW.lead_id) THEN PERFORM lead_variant_refresh(NEW.lead_id); END IF;`,
    call_results_variant_refresh: `IF TG_OP <> 'INSERT' THEN PERFORM lead_variant_refresh(${leadOfResult('OLD')}); END IF;
        IF TG_OP = 'INSERT' OR (TG_OP = 'UPDATE' AND OLD.attempt_id IS DISTINCT FROM NEW.attempt_id) THEN PERFORM lead_variant_refresh(${leadOfResult('NEW')}); END IF;`,
    campaigns_variant_counts_delete: `DELETE FROM variant_counts WHERE campaign_id = OLD.id; DELETE FROM variant_successes WHERE campaign_id = OLD.id;
        DELETE FROM lead_variant_figures WHERE campaign_id = OLD.id;`,
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
    ['call_results_unjudged_rewrite', `BEFORE UPDATE OF extracted_json ON call_results FOR EACH ROW WHEN (${UNJUDGED_REWRITE(d)})`, 'call_results_unjudged_rewrite'],
    ['call_results_variant_insert', `AFTER INSERT ON call_results FOR EACH ROW WHEN (${RESULT_FIGURES('NEW')})`, 'call_results_variant_refresh'],
    ['call_results_variant_update', `AFTER UPDATE OF ${RESULT_COLUMNS} ON call_results FOR EACH ROW WHEN (${changed.call_results})`, 'call_results_variant_refresh'],
    ['call_results_variant_delete', `AFTER DELETE ON call_results FOR EACH ROW WHEN (${RESULT_FIGURES('OLD')})`, 'call_results_variant_refresh'],
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
  'call_results_unjudged_rewrite',
  'campaigns_variant_counts_delete',
];
const POSTGRES_FUNCTIONS = [
  'lead_variant_figures_count()',
  'leads_variant_refresh()',
  'attempts_variant_refresh()',
  'call_results_variant_refresh()',
  'call_results_unjudged_rewrite()',
  'campaigns_variant_counts_delete()',
  'lead_variant_refresh(bigint)',
];

/** 0031's triggers (and, on the way down, these), by name: CASCADE drops each function's triggers with it. */
async function drop0031Triggers(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) for (const fn of POSTGRES_FUNCTIONS) await sql.raw(`DROP FUNCTION IF EXISTS ${fn} CASCADE`).execute(db);
  else for (const t of SQLITE_TRIGGERS) await sql.raw(`DROP TRIGGER IF EXISTS ${t}`).execute(db);
}

/** Back to 0031: its tables rebuilt by its own backfill, with its own triggers. */
export async function down(db: Kysely<any>): Promise<void> {
  await drop0031Triggers(db);
  await db.schema.dropTable('variant_successes').ifExists().execute();
  await db.schema.alterTable('call_results').dropColumn('success_match').execute();
  await db.schema.alterTable('call_results').dropColumn('success_rule').execute();
  await m0031.down(db);
  await m0031.up(db);
}
