import type { CampaignConfig } from '../config/types.js';
import type { AttemptRow } from '../store/types.js';
import type { DecideLead, LeadDecision } from '../store/lead-transitions.js';
import { matchingRule, ruleDecision, type CallFacts } from './result-rules.js';
import { retryDecider, type AttemptOutcome } from './retry-policy.js';

// The decision the store applies when an attempt's outcome is final: the campaign's first
// matching on_result rule (result-rules.ts), else its retry settings (retry-policy.ts).

/**
 * `facts` is what the final outcome showed; null when no rule may decide (an unknown
 * outcome, or a webhook's success the call list has yet to confirm: it is decided again
 * when the list says who answered).
 */
export function leadDecider(
  outcome: AttemptOutcome,
  campaign: { name: string; config: CampaignConfig },
  attempt: Pick<AttemptRow, 'phone_number'>,
  facts: CallFacts | null,
  endedAt: number,
): DecideLead {
  const byRetries = retryDecider(outcome, campaign.config, endedAt);
  const rule = facts ? matchingRule(campaign.config.onResult, facts) : undefined;
  if (!rule || !facts) return byRetries;
  return (lead): LeadDecision => {
    const fallback = byRetries(lead);
    const d = ruleDecision(rule, facts, lead, campaign.config.maxRetries, endedAt, fallback);
    if (d.kind === 'suppress') return { ...d, phone: attempt.phone_number, campaign: campaign.name };
    if (d.kind === 'move') return { kind: 'move', campaign: d.campaign, from: campaign.name, phone: attempt.phone_number, extracted: d.extracted, reason: d.reason, fallback };
    return d;
  };
}
