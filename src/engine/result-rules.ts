// Rules on the result (README, "On the result"): from how a call ended and what the
// assistant extracted, the campaign's on_result rules decide the lead's next step. Pure:
// the first rule whose conditions all hold wins; none matching leaves the decision to the
// retry settings (retry-policy.ts). Applied once per final outcome of an attempt (a
// webhook's provisional success is decided when the call list confirms or revises it).

import type { ResultRule } from '../config/result-rule-types.js';
import { extractedMap, extractedText } from './extracted.js';
import { normaliseStatus } from './outcome.js';
import type { RetryDecision } from './retry-policy.js';

/** What is known of the call when its outcome is final. */
export interface CallFacts {
  status: string;
  /** null or undefined when no source said who answered. */
  answeredBy: string | null | undefined;
  /** The extracted variables as the source carried them (any shape). */
  variables: unknown;
}

/** The first rule that matches, or undefined. */
export function matchingRule(rules: readonly ResultRule[] | undefined, facts: CallFacts): ResultRule | undefined {
  return rules?.find((rule) => matches(rule, facts));
}

function matches(rule: ResultRule, facts: CallFacts): boolean {
  if (rule.status && !rule.status.includes(normaliseStatus(facts.status))) return false;
  if (rule.answeredBy) {
    const who = facts.answeredBy?.trim().toLowerCase();
    if (!who || !rule.answeredBy.includes(who)) return false;
  }
  const v = rule.variable;
  if (!v) return true;
  const text = extractedText(facts.variables, v.name);
  if (text === undefined) return false;
  const lower = text.toLowerCase();
  if (v.equals !== undefined) return v.equals.trim().toLowerCase() === lower;
  if (v.in !== undefined) return v.in.some((x) => x.trim().toLowerCase() === lower);
  if (v.matches !== undefined) return pattern(v.matches).test(text);
  return false;
}

const patterns = new Map<string, RegExp>();
function pattern(source: string): RegExp {
  let re = patterns.get(source);
  if (!re) {
    re = new RegExp(source, 'i');
    patterns.set(source, re);
  }
  return re;
}

/** The rule as explain and the lead's reason name it: `on_result rule 2 (interest = "yes")`. */
export function describeRule(rule: ResultRule): string {
  const parts: string[] = [];
  if (rule.status) parts.push(`status ${rule.status.join('|')}`);
  if (rule.answeredBy) parts.push(`answered_by ${rule.answeredBy.join('|')}`);
  const v = rule.variable;
  if (v?.equals !== undefined) parts.push(`${v.name} = ${JSON.stringify(v.equals)}`);
  if (v?.in !== undefined) parts.push(`${v.name} in [${v.in.map((x) => JSON.stringify(x)).join(', ')}]`);
  if (v?.matches !== undefined) parts.push(`${v.name} matches /${v.matches}/`);
  return `on_result rule ${rule.position} (${parts.join(', ')})`;
}

/** A lead decision made by a rule, beyond what the retry settings can decide. */
export type RuleDecision =
  | { kind: 'complete'; reason: string }
  | { kind: 'retry'; nextDueAt: number; reason: string }
  | { kind: 'next-contact'; contactPosition: number; nextDueAt: number; reason: string }
  | { kind: 'exhausted'; reason: string }
  | { kind: 'invalid'; reason: string }
  | { kind: 'suppress'; reason: string }
  /** `fallback` applies when the target campaign is not in the store (its file is broken). */
  | { kind: 'move'; campaign: string; extracted: Record<string, unknown>; reason: string; fallback: RetryDecision };

/** The lead's counters the retry budget needs. */
export interface RuleLead {
  contact_position: number;
  contact_count: number;
  contact_attempts: number;
}

/**
 * What `rule` does to the lead. `retry_in` keeps to the retry budget (1 + max_retries
 * attempts per contact), so a rule can never call a person without end; `fallback` is the
 * retry settings' own decision.
 */
export function ruleDecision(rule: ResultRule, facts: CallFacts, lead: RuleLead, maxRetries: number, endedAt: number, fallback: RetryDecision): RuleDecision {
  const why = describeRule(rule);
  const then = rule.then;
  switch (then.kind) {
    case 'complete':
      return { kind: 'complete', reason: why };
    case 'invalid':
      return { kind: 'invalid', reason: `wrong number: ${why}` };
    case 'suppress':
      return { kind: 'suppress', reason: `suppressed by ${why}` };
    case 'move-to':
      return { kind: 'move', campaign: then.campaign, extracted: extractedMap(facts.variables), reason: `moved to ${then.campaign} by ${why}`, fallback };
    case 'retry-in': {
      const nextDueAt = endedAt + then.seconds * 1000;
      const budget = 1 + Math.max(0, maxRetries);
      if (lead.contact_attempts < budget) return { kind: 'retry', nextDueAt, reason: `retry in ${then.seconds} s by ${why}` };
      if (lead.contact_position + 1 < lead.contact_count) return { kind: 'next-contact', contactPosition: lead.contact_position + 1, nextDueAt, reason: `next contact by ${why}` };
      return { kind: 'exhausted', reason: `${why} asked for a retry, but attempt ${lead.contact_attempts} of ${budget} (max_retries ${maxRetries}) was the last` };
    }
  }
}
