import { sql, type Kysely } from 'kysely';
import type { Database } from './types.js';

// Each campaign's pre-dial checks (migration 0016), for `status`: how many were asked, how
// many failed (a timeout, a network error, a non-2xx or an answer that was not one of the
// three), and the last failure. Written by the dial loop after each check; read by status,
// which runs in another process.

export interface PredialCheckRecord {
  failed: boolean;
  at: number;
  /** What went wrong, for the last failure; never a secret. */
  detail?: string;
}

/** Counts one check (and its failure) in the campaign's row. */
export async function recordPredialCheck(db: Kysely<Database>, campaignId: number, check: PredialCheckRecord): Promise<void> {
  const failures = check.failed ? 1 : 0;
  const lastAt = check.failed ? check.at : null;
  const lastDetail = check.failed ? (check.detail ?? 'failed') : null;
  await db
    .insertInto('predial_counts')
    .values({ campaign_id: campaignId, checks: 1, failures, last_failure_at: lastAt, last_failure_detail: lastDetail })
    .onConflict((oc) =>
      oc.column('campaign_id').doUpdateSet((eb) => ({
        checks: sql`${eb.ref('predial_counts.checks')} + 1`,
        failures: sql`${eb.ref('predial_counts.failures')} + ${failures}`,
        ...(check.failed ? { last_failure_at: lastAt, last_failure_detail: lastDetail } : {}),
      })),
    )
    .execute();
}

export interface PredialCounts {
  checks: number;
  failures: number;
  lastFailure: { at: number; detail: string } | null;
}

/** Every campaign's counts, by campaign id. */
export async function predialCountsByCampaign(db: Kysely<Database>): Promise<Map<number, PredialCounts>> {
  const rows = await db.selectFrom('predial_counts').selectAll().execute();
  return new Map(
    rows.map((r) => [
      Number(r.campaign_id),
      {
        checks: Number(r.checks),
        failures: Number(r.failures),
        lastFailure: r.last_failure_at === null ? null : { at: Number(r.last_failure_at), detail: r.last_failure_detail ?? '' },
      },
    ]),
  );
}
