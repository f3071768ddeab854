// `on_result:` (README, "On the result"): an ordered list of {when, then} rules that decide
// a lead's next step from how its call ended and what the assistant extracted. The first
// rule that matches wins; without a match the campaign's retry settings apply.
import { ANSWERED_BY, FINAL_CALL_STATUSES } from '../service/schema/constants.js';
import type { Field } from './spec.js';

/** The words `then:` may be on its own. */
export const RULE_WORDS = ['complete', 'suppress', 'invalid'] as const;

/** Longest `retry_in`: a year, as retry_interval. */
const MAX_RETRY_IN = 31_536_000;

const when: Field = {
  spec: {
    kind: 'object',
    fields: {
      status: {
        spec: { kind: 'list', item: { kind: 'enum', values: FINAL_CALL_STATUSES, noun: 'call status' }, minItems: 1 },
        description: "The call's final status is one of these (completed, ended_by_customer, busy, no-answer, failed …).",
        example: ['busy', 'no-answer'],
      },
      answered_by: {
        spec: { kind: 'list', item: { kind: 'enum', values: ANSWERED_BY, noun: 'answered_by value' }, minItems: 1 },
        description: 'Who answered, as the call list says: human, machine or unknown.',
        example: ['machine'],
      },
      variable: { spec: { kind: 'string', noun: 'variable name' }, description: 'Name of an extracted variable to compare (with equals, in or matches).', example: 'interest' },
      equals: { spec: { kind: 'string' }, description: 'The variable equals this (trimmed, case-insensitive).', example: 'yes' },
      in: { spec: { kind: 'list', item: { kind: 'string' }, minItems: 1 }, description: 'The variable equals one of these (trimmed, case-insensitive).', example: ['maybe', 'later'] },
      matches: { spec: { kind: 'string' }, description: 'The variable matches this regular expression (case-insensitive).', example: '^wrong' },
    },
  },
  required: true,
  description: 'What the call must show for the rule to apply; every condition given must hold.',
  example: { variable: 'interest', equals: 'yes' },
};

function then(campaignName: RegExp): Field {
  return {
    spec: {
      kind: 'either',
      text: { kind: 'enum', values: RULE_WORDS, noun: 'rule action' },
      object: {
        kind: 'object',
        exactlyOneOf: ['retry_in', 'move_to'],
        fields: {
          retry_in: { spec: { kind: 'duration', min: 0, max: MAX_RETRY_IN }, description: 'Call again after this long (the retry budget still counts).', example: '2d' },
          move_to: {
            spec: { kind: 'string', pattern: campaignName, noun: 'campaign name', patternHint: 'name a campaign of campaigns_dir' },
            description: 'Continue the lead, with its variables and the extracted ones, in this campaign.',
            example: 'sales-followup',
          },
        },
      },
    },
    required: true,
    description: 'complete (no more attempts), suppress (the number joins the suppression list), invalid (wrong number), { retry_in: DURATION } or { move_to: CAMPAIGN }.',
    example: { move_to: 'sales-followup' },
  };
}

/** The campaign file's `on_result` list; `campaignName` is the pattern campaign names follow. */
export function onResultField(campaignName: RegExp): Field {
  return {
    spec: { kind: 'list', item: { kind: 'object', fields: { when, then: then(campaignName) } } },
    description: 'Rules on the result, tried in order after each call; the first that matches decides (README, "On the result").',
    example: [{ when: { variable: 'interest', equals: 'yes' }, then: { move_to: 'sales-followup' } }, { when: { answered_by: ['machine'] }, then: { retry_in: '1d' } }],
  };
}

/** The campaign file's `extracted_variables`: names the on_result rules are checked against. */
export const EXTRACTED_VARIABLES_FIELD: Field = {
  spec: { kind: 'list', item: { kind: 'string', noun: 'variable name' } },
  description: "Names of the variables the assistant extracts; when given, rules naming another variable get a warning.",
  example: ['interest', 'do_not_call'],
};
