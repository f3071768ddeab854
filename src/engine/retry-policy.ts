// What happens to a lead after one of its attempts ended (rule 4, docs/design.md §3.4).
// Pure: the engine records the decision; this file only decides.
//
// Each contact (the primary number, then the secondary contacts in order) has a budget of
// 1 + max_retries counted attempts. An outcome listed in retry_on retries the same contact
// while budget is left; an outcome not listed is final for that contact. Either way, the
// next contact (if any) is due retry_interval after the previous attempt ended — rule 4
// counts the interval between attempts, not per contact. A call closed with unknown outcome
// (stuck in progress) is never retried and ends the lead: calling again, or calling another
// number of the same person, could reach someone who is still on the line.

import type { RetryableClass } from '../config/types.js';

/** How an attempt ended, as far as retries are concerned. */
export type AttemptOutcome = 'success' | 'voicemail' | 'busy' | 'no-answer' | 'failed' | 'unknown';

export interface RetryInput {
  outcome: AttemptOutcome;
  retryOn: readonly RetryableClass[];
  maxRetries: number;
  retryIntervalSeconds: number;
  /** 0 for the primary number, 1.. for secondary contacts. */
  contactPosition: number;
  /** 1 + the number of secondary contacts. */
  contactCount: number;
  /** Counted attempts on this contact, including the one that just ended. */
  contactAttempts: number;
  /** Epoch ms at which the previous attempt ended. */
  endedAt: number;
}

export type RetryDecision =
  | { kind: 'complete' }
  | { kind: 'retry'; nextDueAt: number }
  | { kind: 'next-contact'; contactPosition: number; nextDueAt: number }
  | { kind: 'exhausted'; reason: string };

/** Decides the lead's next step after an attempt ended. */
export function decideAfterAttempt(input: RetryInput): RetryDecision {
  const { outcome, maxRetries, contactPosition, contactCount, contactAttempts } = input;
  if (outcome === 'success') return { kind: 'complete' };
  if (outcome === 'unknown') return { kind: 'exhausted', reason: 'call outcome unknown; not retried' };

  const nextDueAt = input.endedAt + Math.max(0, input.retryIntervalSeconds) * 1000;
  const budget = 1 + Math.max(0, maxRetries);
  const retryable = input.retryOn.includes(outcome);
  if (retryable && contactAttempts < budget) return { kind: 'retry', nextDueAt };

  if (contactPosition + 1 < contactCount) {
    return { kind: 'next-contact', contactPosition: contactPosition + 1, nextDueAt };
  }
  const why = retryable
    ? `${outcome} on attempt ${contactAttempts} of ${budget} (max_retries ${maxRetries})`
    : `${outcome} is not in retry_on`;
  const contacts = contactCount > 1 ? `; all ${contactCount} contacts tried` : '';
  return { kind: 'exhausted', reason: why + contacts };
}

/** The lead's counters as read where the decision is applied (inside the attempt's transaction). */
export interface LeadCounters {
  contact_position: number;
  contact_count: number;
  contact_attempts: number;
}

/** The decision for the lead an attempt ended with `outcome` left, given to the store to apply. */
export function retryDecider(
  outcome: AttemptOutcome,
  campaign: { retryOn: readonly RetryableClass[]; maxRetries: number; retryIntervalSeconds: number },
  endedAt: number,
): (lead: LeadCounters) => RetryDecision {
  return (lead) =>
    decideAfterAttempt({
      outcome,
      retryOn: campaign.retryOn,
      maxRetries: campaign.maxRetries,
      retryIntervalSeconds: campaign.retryIntervalSeconds,
      contactPosition: lead.contact_position,
      contactCount: lead.contact_count,
      contactAttempts: lead.contact_attempts,
      endedAt,
    });
}
