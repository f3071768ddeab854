import { describe, expect, it } from 'vitest';
import type { ResultRule } from '../../src/config/result-rule-types.js';
import { describeRule, matchingRule, ruleDecision } from '../../src/engine/result-rules.js';

const rules: ResultRule[] = [
  { position: 1, variable: { name: 'outcome', equals: 'Wrong Number' }, then: { kind: 'invalid' } },
  { position: 2, variable: { name: 'interest', in: ['yes', 'very'] }, then: { kind: 'move-to', campaign: 'sales' } },
  { position: 3, variable: { name: 'note', matches: '^call\\s+me' }, then: { kind: 'retry-in', seconds: 3600 } },
  { position: 4, status: ['busy'], then: { kind: 'complete' } },
  { position: 5, status: ['completed'], answeredBy: ['machine'], then: { kind: 'suppress' } },
];

const facts = (over: Partial<{ status: string; answeredBy: string | null | undefined; variables: unknown }> = {}) => ({
  status: 'completed',
  answeredBy: 'human' as string | null | undefined,
  variables: {} as unknown,
  ...over,
});

describe('on_result: the first matching rule wins', () => {
  it('compares extracted variables as trimmed, case-insensitive text', () => {
    expect(matchingRule(rules, facts({ variables: { outcome: '  wrong number ' } }))?.position).toBe(1);
    expect(matchingRule(rules, facts({ variables: { interest: 'VERY' } }))?.position).toBe(2);
    expect(matchingRule(rules, facts({ variables: { note: 'Call me tomorrow' } }))?.position).toBe(3);
  });

  it('takes the earlier rule when two match', () => {
    expect(matchingRule(rules, facts({ variables: { outcome: 'wrong number', interest: 'yes' } }))?.position).toBe(1);
  });

  it('matches status and answered_by together, and never on an answered_by nobody said', () => {
    expect(matchingRule(rules, facts({ status: 'BUSY' }))?.position).toBe(4);
    expect(matchingRule(rules, facts({ answeredBy: 'machine' }))?.position).toBe(5);
    expect(matchingRule(rules, facts({ answeredBy: undefined }))).toBeUndefined();
    expect(matchingRule(rules, facts({ status: 'ended', answeredBy: 'machine' }))).toBeUndefined();
  });

  it('reads the call list\'s variables as {} or [] and ignores values that are not text', () => {
    expect(matchingRule(rules, facts({ variables: [] }))).toBeUndefined();
    expect(matchingRule(rules, facts({ variables: null }))).toBeUndefined();
    expect(matchingRule(rules, facts({ variables: { interest: { nested: 'yes' } } }))).toBeUndefined();
    expect(matchingRule(rules, facts({ variables: { interest: true } }))).toBeUndefined();
    expect(matchingRule([{ position: 1, variable: { name: 'ok', equals: 'true' }, then: { kind: 'complete' } }], facts({ variables: { ok: true } }))?.position).toBe(1);
  });

  it('matches nothing without rules', () => {
    expect(matchingRule(undefined, facts())).toBeUndefined();
    expect(matchingRule([], facts())).toBeUndefined();
  });
});

describe('on_result: what a rule decides', () => {
  const lead = { contact_position: 0, contact_count: 1, contact_attempts: 1 };
  const fallback = { kind: 'complete' } as const;

  it('retry_in schedules the next attempt that long after the call ended, within the retry budget', () => {
    expect(ruleDecision(rules[2]!, facts(), lead, 2, 1_000, fallback)).toMatchObject({ kind: 'retry', nextDueAt: 1_000 + 3_600_000 });
    const last = ruleDecision(rules[2]!, facts(), { ...lead, contact_attempts: 3 }, 2, 1_000, fallback);
    expect(last.kind).toBe('exhausted');
    expect(last.reason).toContain('attempt 3 of 3');
    expect(ruleDecision(rules[2]!, facts(), { contact_position: 0, contact_count: 2, contact_attempts: 3 }, 2, 0, fallback)).toMatchObject({ kind: 'next-contact', contactPosition: 1 });
  });

  it('move_to carries the extracted variables (a mapping only) and the retry settings as fallback', () => {
    const d = ruleDecision(rules[1]!, facts({ variables: { interest: 'yes', budget: 3 } }), lead, 2, 0, fallback);
    expect(d).toMatchObject({ kind: 'move', campaign: 'sales', extracted: { interest: 'yes', budget: 3 }, fallback });
  });

  it('names the rule in the reason explain shows', () => {
    expect(ruleDecision(rules[0]!, facts(), lead, 2, 0, fallback)).toEqual({ kind: 'invalid', reason: 'wrong number: on_result rule 1 (outcome = "Wrong Number")' });
    expect(describeRule(rules[4]!)).toBe('on_result rule 5 (status completed, answered_by machine)');
    expect(describeRule(rules[2]!)).toBe('on_result rule 3 (note matches /^call\\s+me/)');
  });
});
