// Figures computed from the engine's own record (attempt rows) after a run: how full the
// slots were, how fast a freed slot was refilled, how punctual retries were.
import type { Kysely } from 'kysely';
import type { Database } from '../../src/store/types.js';

export interface AttemptSpan {
  campaignId: number;
  leadId: number;
  createdAt: number;
  endedAt: number | null;
  outcomeSource: string | null;
  callId: string | null;
}

/** Every attempt of the run, oldest first. */
export async function attemptSpans(db: Kysely<Database>): Promise<AttemptSpan[]> {
  const rows = await db.selectFrom('attempts').select(['campaign_id', 'lead_id', 'created_at', 'ended_at', 'outcome_source', 'call_id']).orderBy('id').execute();
  return rows.map((r) => ({ campaignId: r.campaign_id, leadId: r.lead_id, createdAt: r.created_at, endedAt: r.ended_at, outcomeSource: r.outcome_source, callId: r.call_id }));
}

/**
 * Time-weighted live attempts ÷ limit between the first and the last claim: while the
 * last lead is not yet claimed, due leads exist, so every idle slot is lost capacity.
 */
export function utilization(spans: readonly AttemptSpan[], limit: number): number {
  if (spans.length < 2) return Number.NaN;
  const from = Math.min(...spans.map((s) => s.createdAt));
  const to = Math.max(...spans.map((s) => s.createdAt));
  if (to <= from) return Number.NaN;
  let busy = 0;
  for (const s of spans) {
    const end = Math.min(to, s.endedAt ?? to);
    if (end > s.createdAt) busy += end - Math.max(from, s.createdAt);
  }
  return busy / (limit * (to - from));
}

/**
 * Slot refill, for one campaign of `limit` slots whose calls each end once: the k-th slot
 * freed (in time order) is refilled by claim number `limit + k`, so the delay is that
 * claim's instant minus the k-th freeing. A slot is freed when the first of its webhook's
 * arrival and its recorded end happens (a poll may close a call before its webhook comes);
 * only the slots a webhook freed are reported. Claims and ends are paired by rank, not by
 * "the next claim after the end is recorded": an engine whose store is a network away
 * stamps a claim when its pass began, which may precede the end recorded meanwhile.
 */
export function refillDelays(spans: readonly AttemptSpan[], webhookAppliedAt: ReadonlyMap<string, number>, limit: number): number[] {
  const freed: { at: number; byWebhook: boolean }[] = [];
  for (const s of spans) {
    if (s.endedAt === null) continue;
    const arrival = s.callId === null ? undefined : webhookAppliedAt.get(s.callId);
    freed.push(arrival !== undefined && arrival <= s.endedAt ? { at: arrival, byWebhook: true } : { at: s.endedAt, byWebhook: false });
  }
  freed.sort((a, b) => a.at - b.at);
  const claims = spans.map((s) => s.createdAt).sort((a, b) => a - b);
  const delays: number[] = [];
  for (const [k, slot] of freed.entries()) {
    const refill = claims[limit + k];
    if (refill === undefined) break;
    if (slot.byWebhook) delays.push(refill - slot.at);
  }
  return delays;
}

/** For each retry: its claim − (previous attempt's end + retry interval), per lead. */
export function retryErrors(spans: readonly AttemptSpan[], retryIntervalMs: number): number[] {
  const byLead = new Map<number, AttemptSpan[]>();
  for (const s of spans) byLead.set(s.leadId, [...(byLead.get(s.leadId) ?? []), s]);
  const errors: number[] = [];
  for (const list of byLead.values()) {
    for (let i = 1; i < list.length; i++) {
      const prev = list[i - 1] as AttemptSpan;
      const cur = list[i] as AttemptSpan;
      if (prev.endedAt !== null) errors.push(cur.createdAt - (prev.endedAt + retryIntervalMs));
    }
  }
  return errors;
}
