import type { CampaignConfig } from '../config/types.js';
import type { ResultRule } from '../config/result-rule-types.js';
import type { AttemptRow } from '../store/types.js';
import type { DecideLead, LeadDecision } from '../store/lead-transitions.js';
import { callbackNote, type CallbackCampaign } from './callback-decision.js';
import { extractedText } from './extracted.js';
import { matchingRule, ruleDecision, type CallFacts } from './result-rules.js';
import { retryDecider, type AttemptOutcome } from './retry-policy.js';

// The decision the store applies when an attempt's outcome is final, in this order:
//  1. the campaign's first matching on_result rule (result-rules.ts): what the
//     conversation decided explicitly (suppress, invalid, move_to…) wins over a time the
//     person also named, which is then recorded as refused with the rule as its reason;
//  2. a callback the person asked for (callback-decision.ts), readable and allowed;
//  3. the retry settings (retry-policy.ts), with an unreadable or refused callback recorded.

/**
 * `facts` is what the final outcome showed; null when no rule may decide (an unknown
 * outcome, or a webhook's success the call list has yet to confirm: it is decided again
 * when the list says who answered).
 */
export function leadDecider(
  outcome: AttemptOutcome,
  campaign: { name: string; config: CampaignConfig } & CallbackCampaign,
  attempt: Pick<AttemptRow, 'phone_number'>,
  facts: CallFacts | null,
  endedAt: number,
): DecideLead {
  const byRetries = retryDecider(outcome, campaign.config, endedAt);
  if (!facts || decidesByRetries(campaign.config, facts)) return byRetries;
  const rule = matchingRule(campaign.config.onResult, facts);
  const callbacks = campaign.config.callbacks;
  return (lead): LeadDecision => {
    const note = callbacks ? callbackNote(callbacks, facts.variables, campaign, lead, attempt.phone_number, endedAt) : null;
    if (rule) {
      const decided = byRule(rule, facts, lead);
      return note ? { ...decided, callback: { ...note, dueAt: null, refusedReason: `${decided.reason ?? 'an on_result rule'} decided instead` } } : decided;
    }
    if (note && note.dueAt !== null) {
      const moved = note.movedReason ? `, moved to ${new Date(note.dueAt).toISOString()} (${note.movedReason})` : '';
      return { kind: 'callback', nextDueAt: note.askedAt!, reason: `callback asked: "${note.asked}" (${note.zone})${moved}`, callback: note };
    }
    const fallback = byRetries(lead);
    return note ? { ...fallback, callback: note } : fallback;
  };

  function byRule(rule: ResultRule, facts: CallFacts, lead: Parameters<DecideLead>[0]): LeadDecision {
    const fallback = byRetries(lead);
    const d = ruleDecision(rule, facts, lead, campaign.config.maxRetries, endedAt, fallback);
    if (d.kind === 'suppress') return { ...d, phone: attempt.phone_number, campaign: campaign.name };
    if (d.kind === 'move') return { kind: 'move', campaign: d.campaign, from: campaign.name, phone: attempt.phone_number, extracted: d.extracted, reason: d.reason, fallback };
    return d;
  }
}

/**
 * Whether the retry settings alone decide a final outcome with these facts: no rule
 * matches and no callback was asked (an asked one is decided, even refused, so that its
 * refusal is recorded). A webhook's success was decided so before the call list confirmed
 * it, and a confirmation that changes nothing is then not decided a second time.
 */
export function decidesByRetries(config: CampaignConfig, facts: CallFacts): boolean {
  if (matchingRule(config.onResult, facts)) return false;
  const callbacks = config.callbacks;
  return !callbacks || (extractedText(facts.variables, callbacks.variable) ?? '') === '';
}

/** Whether what the call extracted may decide the lead (a success is then decided again once final). */
export function decidesByResult(config: CampaignConfig): boolean {
  return config.onResult !== undefined || config.callbacks !== undefined;
}
