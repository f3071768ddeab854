import { createRequire } from 'node:module';
import { sql, type Kysely } from 'kysely';
import { variableSays, type VariableRule } from './variable-match.js';
import { isPostgres } from './dialect.js';
import { LOCK_NOT_AVAILABLE, sqlState } from './pg-errors.js';
import { hasMigration } from './migrate.js';
import type { Database } from './types.js';

// success_when kept by the database (migration 0035; README, "Assistant variants"): whoever
// writes a call result judges its extracted variables once, in JS, under the campaign's rule,
// and stores the judgment with the rule's key; the triggers sum the judgments per (campaign,
// variant, key). A rule changed in the file is judged again once, by the config sync
// (judgeCampaignSuccesses); until then, and for any call judged under another rule, `status`
// judges that campaign's calls itself (variantExtractedByCampaign): slower, never wrong.

/** The migration that keeps the judgments. */
export const VARIANT_SUCCESSES_MIGRATION = '0035_variant_successes';

const keys = new WeakMap<VariableRule, string>();
/**
 * node:crypto, loaded at the first key: `campaignd status` imports this module for every
 * store, and loading crypto is ~5 ms of its start, paid only where a campaign has a rule.
 */
let crypto: typeof import('node:crypto') | undefined;

/**
 * A rule's key: the same for two rules that judge every answer alike (the values as
 * variableSays compares them: trimmed, lower-cased, as a set), another for any other rule
 * or another way of judging (the version below).
 */
export function successRuleKey(rule: VariableRule): string {
  let key = keys.get(rule);
  if (key === undefined) {
    const values = [...new Set(rule.values.map((v) => v.trim().toLowerCase()))].sort();
    crypto ??= createRequire(import.meta.url)('node:crypto') as typeof import('node:crypto');
    key = crypto.createHash('sha256').update(JSON.stringify(['variableSays/1', rule.variable, values])).digest('hex').slice(0, 24);
    keys.set(rule, key);
  }
  return key;
}

/** The judgment of a result's stored extracted_json, as status would judge it: unreadable JSON says nothing. */
export function judgeExtracted(rule: VariableRule, extractedJson: string): 0 | 1 {
  let extracted: unknown;
  try {
    extracted = JSON.parse(extractedJson);
  } catch {
    return 0;
  }
  return variableSays(rule, extracted) ? 1 : 0;
}

/** The columns a result writer stores beside extracted_json: not judged without a rule or variables. */
export function judgmentOf(rule: VariableRule | undefined, extractedJson: string | null): { success_rule: string | null; success_match: number | null } {
  if (!rule || extractedJson === null) return { success_rule: null, success_match: null };
  return { success_rule: successRuleKey(rule), success_match: judgeExtracted(rule, extractedJson) };
}

/**
 * Results judged per transaction. On PostgreSQL each judgment rewrites its campaign's sums
 * (the same few rows of variant_counts and variant_successes), and every version of a row
 * written again in one transaction lengthens the chain the next write walks: shorter there.
 */
const BATCH = { sqlite: 500, postgres: 100 };

/**
 * Judges again, under `rule`, every answered call of the campaign (a counted reached call
 * whose result holds extracted variables) not judged under it: once when the rule changed
 * (`previous` is the rule the store had) or when the kept judgments are incomplete (results
 * written before 0035, or by a writer still on the rule of before). In short transactions
 * (BATCH), so writers go on meanwhile. Returns the results judged.
 */
export async function judgeCampaignSuccesses(
  db: Kysely<Database>,
  campaignId: number,
  rule: VariableRule,
  previous?: VariableRule,
  /** Asked before each batch: true ends the pass (the daemon stopping); the next sync goes on from there. */
  stop: () => boolean = () => false,
): Promise<number> {
  if (!(await hasMigration(db, VARIANT_SUCCESSES_MIGRATION))) return 0;
  const key = successRuleKey(rule);
  const changed = previous === undefined || successRuleKey(previous) !== key;
  if (!changed && (await keptSuccesses(db, [{ id: campaignId, key }])).has(campaignId)) return 0;
  let after = 0;
  let judged = 0;
  while (!stop()) {
    // The answered calls only (counted, reached, with variables): what the sums count. The
    // writers judge every result they write; one of before that is answered later (a call
    // counted again by an operator) is judged by the next sync, status judging meanwhile.
    const rows = await db
      .selectFrom('call_results as r')
      .innerJoin('attempts as a', 'a.id', 'r.attempt_id')
      .select(['r.attempt_id', 'r.extracted_json'])
      .where('r.campaign_id', '=', campaignId)
      .where('r.attempt_id', '>', after)
      .where('r.extracted_json', 'is not', null)
      .where((eb) => eb.or([eb('r.success_rule', 'is', null), eb('r.success_rule', '<>', key)]))
      .where('a.outcome', '=', 'success')
      .where('a.counted', '=', 1)
      .orderBy('r.attempt_id')
      .limit(isPostgres(db) ? BATCH.postgres : BATCH.sqlite)
      .execute();
    if (rows.length === 0) return judged;
    const byMatch: [number[], number[]] = [[], []];
    for (const r of rows) byMatch[judgeExtracted(rule, r.extracted_json!)].push(Number(r.attempt_id));
    if (!(await writeJudgments(db, key, byMatch))) return judged;
    judged += rows.length;
    after = Number(rows.at(-1)!.attempt_id);
  }
  return judged;
}

const TRIES = 10;

/**
 * One batch of judgments, in one transaction. On PostgreSQL it gives way to the writers:
 * they lock a result, then its lead's figures, then the campaign's sums, and a writer's
 * transaction (the group commit) may hold the sums and come for a result of this batch;
 * waiting for it would be a deadlock that PostgreSQL might resolve by failing the writer.
 * So this batch waits at most lock_timeout (below deadlock_timeout, 1 s by default), then
 * rolls back, freeing the writer, and is tried again. False when it never got through
 * (the judgments stay incomplete: status judges the campaign's calls itself until the next sync).
 */
async function writeJudgments(db: Kysely<Database>, key: string, byMatch: [number[], number[]]): Promise<boolean> {
  for (let tried = 1; ; tried++) {
    try {
      await db.transaction().execute(async (trx) => {
        if (isPostgres(trx)) await sql`SET LOCAL lock_timeout = '200ms'`.execute(trx);
        for (const match of [0, 1] as const) {
          const ids = byMatch[match];
          if (ids.length > 0) await trx.updateTable('call_results').set({ success_rule: key, success_match: match }).where('attempt_id', 'in', ids).where('extracted_json', 'is not', null).execute();
        }
      });
      return true;
    } catch (err) {
      if (sqlState(err) !== LOCK_NOT_AVAILABLE) throw err;
      if (tried === TRIES) return false;
    }
  }
}

/**
 * Each campaign's successes per variant, by campaign id, where the database kept them
 * under the campaign's rule `key` for every lead that has an answered call (a counted
 * reached call with extracted variables): one read of a few rows per campaign and variant.
 * A campaign left out must be judged from its calls (a rule not yet judged again, a call
 * judged under another rule, a store not migrated to 0035).
 */
export async function keptSuccesses(db: Kysely<Database>, campaigns: readonly { id: number; key: string }[]): Promise<Map<number, Map<string, number>>> {
  const out = new Map<number, Map<string, number>>();
  if (campaigns.length === 0 || !(await hasMigration(db, VARIANT_SUCCESSES_MIGRATION))) return out;
  const ids = [...new Set(campaigns.map((c) => c.id))];
  const answered = await db.selectFrom('variant_counts').select(['campaign_id', 'variant', 'answered_leads']).where('campaign_id', 'in', ids).where('variant', '<>', '').execute();
  const judged = await db.selectFrom('variant_successes').select(['campaign_id', 'variant', 'success_rule', 'leads', 'successes']).where('campaign_id', 'in', ids).where('leads', '<>', 0).execute();
  const keyOf = new Map(campaigns.map((c) => [c.id, c.key]));
  const underKey = new Map<string, { leads: number; successes: number }>();
  for (const r of judged) {
    if (keyOf.get(Number(r.campaign_id)) === r.success_rule) underKey.set(`${Number(r.campaign_id)}\u0000${r.variant}`, { leads: Number(r.leads), successes: Number(r.successes) });
  }
  const complete = new Set(ids);
  for (const r of answered) {
    const id = Number(r.campaign_id);
    const kept = underKey.get(`${id}\u0000${r.variant}`);
    if ((kept?.leads ?? 0) !== Number(r.answered_leads)) {
      complete.delete(id);
      continue;
    }
    if (!out.has(id)) out.set(id, new Map());
    if (kept) out.get(id)!.set(r.variant, kept.successes);
  }
  for (const id of ids) {
    if (!complete.has(id)) out.delete(id);
    else if (!out.has(id)) out.set(id, new Map());
  }
  return out;
}
