import type { Kysely } from 'kysely';
import type { Logger } from '../log/logger.js';
import type { GroupCommit } from '../store/group-commit.js';
import { countedAttempts } from '../store/attempts.js';
import { isLeadCancelled } from '../store/lead-cancel.js';
import { recordPredialCheck } from '../store/predial-counts.js';
import type { AttemptRow, Database } from '../store/types.js';
import { errText, type EngineMetrics } from './engine-types.js';
import { PREDIAL_FAILURE_DEFER_MS } from './policy.js';
import { askPredial, type PredialDeps, type PredialVerdict } from './predial.js';
import type { RuntimeCampaign } from './runtime-campaign.js';

// The dial loop's side of the pre-dial check (predial.ts asks, dialer.ts records the
// verdict): the lead's attempt number, the count for `status` and /metrics, a log line
// when a campaign's check starts and stops failing (not one per lead), and a last look at
// the lead, so that a cancel that came while the check ran is not followed by its call.

export interface PredialStepDeps {
  db: Kysely<Database>;
  commit: GroupCommit;
  logger: (campaign: string) => Logger;
  metrics?: EngineMetrics | undefined;
  /** How checks are sent; without it every check fails and the leads wait. */
  predial?: PredialDeps | undefined;
  now: () => number;
  /** Aborted when the engine stops: a check in flight ends at once and its lead goes back. */
  stopping: () => AbortSignal;
}

/** Asks a campaign's check about one claimed attempt. Never throws: whatever goes wrong is a failed check. */
export type PredialStep = (c: RuntimeCampaign, attempt: AttemptRow, variables: Record<string, unknown>) => Promise<PredialVerdict>;

export function createPredialStep(deps: PredialStepDeps): PredialStep {
  /** Campaigns whose last check failed. */
  const failing = new Set<number>();
  const failed = (err: unknown): PredialVerdict => ({ kind: 'failed', afterMs: PREDIAL_FAILURE_DEFER_MS, detail: `pre-dial check failed: ${errText(err)}` });

  return async (c, attempt, variables) => {
    const log = deps.logger(c.name);
    let verdict: PredialVerdict;
    try {
      if (!deps.predial || !c.config.predial) throw new Error('this daemon has no HTTP client for pre-dial checks');
      const number = await countedAttempts(deps.db, attempt.lead_id);
      verdict = await askPredial(deps.predial, c.config.predial, { campaign: c.name, leadId: attempt.lead_id, phoneNumber: attempt.phone_number, variables, attempt: number }, deps.stopping());
    } catch (err) {
      verdict = failed(err);
    }
    deps.metrics?.predialCheck?.(c.name, verdict.kind);
    const failure = verdict.kind === 'failed' ? verdict.detail : null;
    try {
      await deps.commit.run((trx) => recordPredialCheck(trx, c.id, { failed: failure !== null, at: deps.now(), ...(failure !== null ? { detail: failure } : {}) }));
    } catch (err) {
      log.warn({ err: errText(err) }, 'pre-dial check not counted in status (store error)');
    }
    if (failure !== null && !failing.has(c.id)) {
      failing.add(c.id);
      log.warn({ lead: attempt.lead_id, detail: failure }, 'pre-dial check failed; leads are deferred, not called, until it answers (status shows the failures)');
    } else if (failure === null && failing.delete(c.id)) {
      log.info('pre-dial check answers again');
    }
    if (verdict.kind !== 'call') return verdict;
    // A cancel (the API's DELETE) that came while the check ran: the call it allowed is not
    // placed. (One that comes after this read finds a claimed lead: its call goes ahead.)
    try {
      if (await isLeadCancelled(deps.db, attempt.lead_id)) return { kind: 'cancel', reason: 'cancelled while the pre-dial check ran' };
    } catch (err) {
      return failed(err);
    }
    return verdict;
  };
}
