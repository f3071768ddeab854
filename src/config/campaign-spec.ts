// The campaign file as written (docs/design.md §2.2). This table is the single source of the
// checker, the defaults and config/campaign.schema.json; docs/configuration.md documents the same.
//
// Defaults the operator may leave out follow the live service's own defaults for a new
// campaign (listed in docs/simulator.md): max_calls_in_parallel 3, max_retries 3, retry_interval 60 s. The calling
// window (allowed_days, allowed_hours_*) has no default on purpose: calling people is
// regulated, and campaignd never guesses when it may call them.
import { ACCOUNT_NAME_PATTERN } from './daemon-spec.js';
import { isSupportedCountry } from 'libphonenumber-js';
import { RETRYABLE_CLASSES, WEEKDAY_NAMES } from './types.js';
import type { Field, Spec } from './spec.js';
import { attemptCapField } from './attempt-cap-spec.js';
import { EXTRACTED_VARIABLES_FIELD, onResultField } from './on-result-spec.js';

/** predial.timeout_ms when the file leaves it out. */
export const PREDIAL_DEFAULT_TIMEOUT_MS = 3000;

/**
 * What a call counts for in a budget before any call of the campaign has a known cost.
 * Deliberately high for a call of a few minutes (the simulator's and the service's calls
 * cost cents per minute): until the first cost is known calls go out one at a time, so a
 * guess too low cannot overshoot by more than one call; one too high holds back sooner.
 */
export const DEFAULT_ASSUMED_COST_PER_CALL = 1;

/** callbacks.max_per_lead and callbacks.horizon_days when the file leaves them out. */
export const CALLBACKS_DEFAULT_MAX_PER_LEAD = 2;
export const CALLBACKS_DEFAULT_HORIZON_DAYS = 30;

/**
 * Characters allowed in a campaign name: it is typed in commands, and it is a segment of
 * the API's paths, where "." and ".." are dot segments every HTTP client removes.
 */
export const CAMPAIGN_NAME_PATTERN = /^(?!\.{1,2}$)[A-Za-z0-9._-]{1,64}$/;

/** Characters allowed in a variant name: it is a column value in the results export. */
export const VARIANT_NAME_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;

const DAY_ALIASES: Record<string, string> = { mon: 'monday', tue: 'tuesday', wed: 'wednesday', thu: 'thursday', fri: 'friday', sat: 'saturday', sun: 'sunday' };

const time: Spec = { kind: 'time' };
const header: Spec = { kind: 'string', noun: 'column header' };

/** Every field of a campaign file. */
export const CAMPAIGN_FIELDS: Readonly<Record<string, Field>> = {
  name: {
    spec: { kind: 'string', pattern: CAMPAIGN_NAME_PATTERN, noun: 'campaign name', patternHint: 'use 1 to 64 letters, digits, ".", "_" or "-", not "." or ".." alone (the name is typed in commands and is part of API paths)' },
    description: 'Unique campaign name, used in commands. Default: the file name without extension.',
    example: 'spring-renewals',
  },
  account: {
    spec: { kind: 'string', pattern: ACCOUNT_NAME_PATTERN, noun: 'account name', patternHint: 'use the name of one of the daemon file\'s accounts:' },
    description: 'The account (accounts: in the daemon file) this campaign dials under; needed when there are several (README, "Many accounts").',
    example: 'acme',
  },
  assistant_id: {
    spec: { kind: 'integer', min: 1 },
    description: 'Id of the outbound assistant that makes the calls. Give this or assistants, not both.',
    example: 12,
  },
  assistants: {
    spec: {
      kind: 'list',
      minItems: 1,
      item: {
        kind: 'object',
        fields: {
          id: { spec: { kind: 'integer', min: 1 }, required: true, description: 'Id of the outbound assistant of this variant.', example: 12 },
          weight: { spec: { kind: 'integer', min: 1, max: 1_000_000 }, required: true, description: 'Share of the leads given this variant, relative to the other weights.', example: 1 },
          name: { spec: { kind: 'string', pattern: VARIANT_NAME_PATTERN, noun: 'variant name', patternHint: 'use 1 to 64 letters, digits, ".", "_" or "-"' }, required: true, description: 'Name of the variant, shown in status and the results export.', example: 'friendly' },
        },
      },
    },
    description: 'Assistant variants (an A/B test) instead of assistant_id: each lead is given one variant, by weight, for all its attempts (README, "Assistant variants").',
    example: [{ id: 12, weight: 1, name: 'friendly' }, { id: 14, weight: 1, name: 'direct' }],
  },
  success_when: {
    spec: {
      kind: 'object',
      exactlyOneOf: ['in', 'equals'],
      fields: {
        variable: { spec: { kind: 'string' }, required: true, description: 'Name of the extracted variable that says whether the call succeeded.', example: 'interested' },
        in: { spec: { kind: 'list', item: { kind: 'string' }, minItems: 1 }, description: 'Values that count as success (trimmed, case-insensitive text).', example: ['yes', 'maybe'] },
        equals: { spec: { kind: 'string' }, description: 'The one value that counts as success (trimmed, case-insensitive text).', example: 'yes' },
      },
    },
    description: 'What counts as a success when comparing assistant variants. Default: the call reached the person (outcome success).',
    example: { variable: 'interested', in: ['yes', 'maybe'] },
  },
  timezone: {
    spec: { kind: 'zone' },
    description: "IANA zone of the calling window. Default: the assistant's timezone from the service.",
    example: 'Europe/Berlin',
  },
  allowed_days: {
    spec: { kind: 'list', item: { kind: 'enum', values: WEEKDAY_NAMES, aliases: DAY_ALIASES, noun: 'day name' }, minItems: 1 },
    required: true,
    description: 'Days on which calls may be placed (monday … sunday; mon … sun also accepted).',
    example: ['monday', 'tuesday', 'wednesday', 'thursday', 'friday'],
  },
  allowed_hours_start_time: {
    spec: time,
    required: true,
    description: 'Start of the daily window, local time "HH:MM" or "HH:MM:SS". Equal start and end: the whole day.',
    example: '09:00:00',
  },
  allowed_hours_end_time: {
    spec: time,
    required: true,
    description: 'End of the daily window (exclusive). Earlier than the start: the window runs past midnight.',
    example: '18:00:00',
  },
  max_calls_in_parallel: {
    spec: { kind: 'integer', min: 1, max: 1000 },
    default: 3,
    description: 'Most live calls of this campaign at any time.',
    example: 5,
  },
  max_retries: {
    spec: { kind: 'integer', min: 0, max: 20 },
    default: 3,
    description: 'Retries after the first attempt, per contact.',
    example: 2,
  },
  retry_interval: {
    spec: { kind: 'duration', min: 0, max: 31_536_000 },
    default: 60,
    description: 'Time from the end of an attempt to the next one: seconds (3600) or a duration such as "90m", "1h", "1h30m", "2d".',
    example: '1h',
  },
  mark_complete_when_no_leads: {
    spec: { kind: 'boolean' },
    default: true,
    description: 'Mark the campaign completed once every lead is final.',
    example: true,
  },
  retry_on: {
    spec: { kind: 'list', item: { kind: 'enum', values: RETRYABLE_CLASSES, noun: 'retryable outcome' } },
    default: [...RETRYABLE_CLASSES],
    description: 'Outcome classes that are retried; others are final. An empty list retries nothing.',
    example: ['busy', 'no-answer'],
  },
  blackout_dates: {
    spec: { kind: 'list', item: { kind: 'date' } },
    default: [],
    description: 'Whole local days (YYYY-MM-DD) without calls.',
    example: ['2026-12-24', '2026-12-25'],
  },
  lead_local_hours: {
    spec: {
      kind: 'object',
      fields: {
        start: { spec: time, required: true, description: "Earliest local time at the called person's location.", example: '08:00:00' },
        end: { spec: time, required: true, description: "End of the called person's local hours (exclusive).", example: '21:00:00' },
      },
    },
    description: "The called person's local hours too (uses the lead's timezone column).",
    example: { start: '08:00:00', end: '21:00:00' },
  },
  status: {
    spec: { kind: 'enum', values: ['running', 'paused'], noun: 'campaign status' },
    default: 'running',
    description: 'Initial state when the campaign is first seen: running or paused.',
    example: 'running',
  },
  leads: {
    spec: {
      kind: 'object',
      exactlyOneOf: ['file', 'remote_campaign_id'],
      fields: {
        file: { spec: { kind: 'path' }, description: "Lead file (CSV or .xlsx), relative to the campaign file's folder.", example: 'leads/spring.csv' },
        remote_campaign_id: { spec: { kind: 'integer', min: 1 }, description: "Read this service campaign's leads instead.", example: 17 },
      },
    },
    required: true,
    description: 'Where the leads come from: exactly one of file or remote_campaign_id.',
    example: { file: 'leads/spring.csv' },
  },
  lead_columns: {
    spec: {
      kind: 'object',
      fields: {
        phone_number: { spec: header, description: 'Header of the column with the number to call.', example: 'Phone' },
        timezone: { spec: header, description: "Header of the column with the lead's IANA zone.", example: 'TZ' },
        country: { spec: header, description: 'Header of the column with the ISO country of national-format numbers.', example: 'Land' },
        secondary_phone_numbers: {
          spec: { kind: 'list', item: header },
          description: 'Headers of secondary numbers, called in this order after the primary.',
          example: ['Mobile', 'Work'],
        },
        variables: {
          spec: { kind: 'map', value: header, noun: 'variable names to headers' },
          description: 'Variable name → header; other columns stay variables under their header.',
          example: { first_name: 'Vorname' },
        },
      },
    },
    description:
      "Which headers of the lead file hold what, when they are not campaignd's own names. Fields not given are recognised from common header names (Phone, Telefon, Mobile, TZ, Land …).",
    example: { phone_number: 'Phone', timezone: 'TZ', secondary_phone_numbers: ['Mobile', 'Work'], variables: { first_name: 'Vorname' } },
  },
  default_country: {
    spec: { kind: 'country', isSupported: isSupportedCountry },
    description: 'ISO 3166 two-letter country for lead numbers written in national format.',
    example: 'US',
  },
  opt_out: {
    spec: {
      kind: 'object',
      fields: {
        variable: { spec: { kind: 'string' }, required: true, description: 'Name of the extracted variable that carries the answer.', example: 'do_not_call' },
        values: { spec: { kind: 'list', item: { kind: 'string' }, minItems: 1 }, required: true, description: 'Values meaning "no more calls" (compared as trimmed, case-insensitive text).', example: ['yes', 'true'] },
      },
    },
    description: "When a call's extracted variable says so, its number joins the suppression list (all campaigns) at once (README, \"Who may be called, when\").",
    example: { variable: 'do_not_call', values: ['yes', 'true'] },
  },
  calling_rules: {
    spec: { kind: 'path' },
    description: "YAML rules by region (README, \"Who may be called, when\"), relative to the campaign file's folder; they only narrow the window. The daemon's rules apply too.",
    example: '../calling-rules/us.yaml',
  },
  max_attempts_per_number: attemptCapField("At most count attempts to one number in any rolling window_hours, every campaign's attempts counted (README, \"Who may be called, when\")."),
  predial: {
    spec: {
      kind: 'object',
      fields: {
        url: { spec: { kind: 'url' }, required: true, description: 'Where the lead is POSTed before each call (JSON, signed like hooks).', example: 'https://crm.example/campaignd/predial' },
        secret_env: { spec: { kind: 'env-name' }, required: true, description: 'Environment variable holding the secret that signs each check (X-Campaignd-Signature).', example: 'CRM_PREDIAL_SECRET' },
        timeout_ms: {
          spec: { kind: 'integer', min: 100, max: 30_000 },
          default: PREDIAL_DEFAULT_TIMEOUT_MS,
          description: 'How long the check may take; past it the lead is deferred, never called unchecked.',
          example: 2000,
        },
      },
    },
    description: 'Ask your system before each call (README, "Pre-dial check"): the call is placed only on {"call": true}.',
    example: { url: 'https://crm.example/campaignd/predial', secret_env: 'CRM_PREDIAL_SECRET', timeout_ms: 2000 },
  },
  extracted_variables: EXTRACTED_VARIABLES_FIELD,
  on_result: onResultField(CAMPAIGN_NAME_PATTERN),
  callbacks: {
    spec: {
      kind: 'object',
      fields: {
        variable: { spec: { kind: 'string' }, required: true, description: 'Name of the extracted variable that carries the time the person asked to be called back at.', example: 'callback_at' },
        max_per_lead: { spec: { kind: 'integer', min: 1, max: 100 }, default: CALLBACKS_DEFAULT_MAX_PER_LEAD, description: `Most callbacks one lead is given; one more asked is recorded as refused. Default: ${CALLBACKS_DEFAULT_MAX_PER_LEAD}.`, example: 2 },
        horizon_days: { spec: { kind: 'integer', min: 1, max: 366 }, default: CALLBACKS_DEFAULT_HORIZON_DAYS, description: `A time further ahead than this many days is recorded and not scheduled. Default: ${CALLBACKS_DEFAULT_HORIZON_DAYS}.`, example: 30 },
      },
    },
    description: 'Call the person back when they ask (README, "Callbacks the person asks for"): the time is read from an extracted variable, in the person\'s zone.',
    example: { variable: 'callback_at', max_per_lead: 2, horizon_days: 30 },
  },
  budget: {
    spec: {
      kind: 'object',
      fields: {
        max_cost: { spec: { kind: 'amount', min: 0 }, description: "Most the campaign may spend in all, in the service's currency (the calls' total_cost added up).", example: 250 },
        max_cost_per_day: { spec: { kind: 'amount', min: 0 }, description: "Most it may spend in one day, the campaign's day in its timezone.", example: 50 },
        assumed_cost_per_call: {
          spec: { kind: 'amount', min: 0 },
          description: `What a call counts for before any call's cost is known (until then one call at a time is placed). Default: ${DEFAULT_ASSUMED_COST_PER_CALL}.`,
          example: 0.5,
        },
      },
    },
    description: 'Caps on what the campaign spends (README, "Budgets"): no call is placed that could take it over; unpriced calls count at the largest cost per call so far, the next call at the mean.',
    example: { max_cost: 250, max_cost_per_day: 50 },
  },
  allow_duplicates: {
    spec: { kind: 'boolean' },
    default: false,
    description: 'Keep the same phone number twice as two leads.',
    example: false,
  },
};

/** The campaign file's root. `$schema` is allowed so that JSON files can name the schema. */
export const CAMPAIGN_SPEC: Extract<Spec, { kind: 'object' }> = { kind: 'object', fields: CAMPAIGN_FIELDS, exactlyOneOf: ['assistant_id', 'assistants'], extraKeys: ['$schema'] };
