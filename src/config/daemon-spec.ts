// The daemon file as written (docs/design.md §2.1): the single source of its checker and defaults.
import type { Field, Spec } from './spec.js';
import { HOOK_EVENT_TYPES } from '../store/results-hook-types.js';
import { attemptCapField } from './attempt-cap-spec.js';

/** How long an active instance's lease lasts when ha.lease_seconds is not written. */
export const DEFAULT_LEASE_SECONDS = 10;

export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;

/** Both sliding windows of the service's limiter, for api: and for each account. */
const RATE_LIMIT_FIELD: Field = {
  spec: {
    kind: 'object',
    fields: {
      requests_per_minute: { spec: { kind: 'integer', min: 1, max: 100_000 }, default: 100, description: 'Requests in any 60 s (a sliding window).', example: 100 },
      burst: { spec: { kind: 'integer', min: 1, max: 100_000 }, default: 20, description: 'Requests in any burst_window_seconds (a sliding window).', example: 20 },
      burst_window_seconds: { spec: { kind: 'integer', min: 1, max: 60 }, default: 10, description: 'Length of the burst window.', example: 10 },
    },
  },
  default: {},
  description: "One budget for every request to the service, mirroring the service's limiter (both windows counted on request start).",
};

/** An account's name: typed in campaign files and shown by status and /metrics. */
export const ACCOUNT_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** Every field of campaignd.yaml. */
export const DAEMON_FIELDS: Readonly<Record<string, Field>> = {
  api: {
    spec: {
      kind: 'object',
      fields: {
        base_url: { spec: { kind: 'url' }, description: "The service's base URL; env CAMPAIGND_API_BASE_URL overrides.", example: 'https://service.example' },
        token_file: { spec: { kind: 'path' }, description: 'File holding the API token; else env CAMPAIGND_API_TOKEN.', example: '/run/credentials/campaignd/token' },
        token: {
          spec: {
            kind: 'forbidden',
            message: 'the API token must not be written in the config file',
            hint: 'remove api.token; put the token in a file named by api.token_file, or in the environment variable CAMPAIGND_API_TOKEN',
          },
          description: 'Not allowed: use token_file or CAMPAIGND_API_TOKEN.',
        },
        rate_limit: RATE_LIMIT_FIELD,
        server_timezone: { spec: { kind: 'zone' }, default: 'UTC', description: 'Zone of the service\'s "YYYY-MM-DD HH:MM:SS" timestamps.', example: 'UTC' },
      },
    },
    default: {},
    description: 'How to reach the Voice Assistant Calling Service.',
  },
  accounts: {
    spec: {
      kind: 'list',
      minItems: 1,
      item: {
        kind: 'object',
        exactlyOneOf: ['token_file', 'token_env'],
        fields: {
          name: {
            spec: { kind: 'string', pattern: ACCOUNT_NAME_PATTERN, noun: 'account name', patternHint: 'use 1 to 64 letters, digits, ".", "_" or "-"' },
            required: true,
            description: 'The name a campaign gives in account:, shown by status and /metrics.',
            example: 'acme',
          },
          token_file: { spec: { kind: 'path' }, description: "File holding this account's API token (reread on SIGHUP).", example: '/run/credentials/campaignd/acme-token' },
          token_env: { spec: { kind: 'env-name' }, description: "Environment variable holding this account's API token.", example: 'ACME_API_TOKEN' },
          rate_limit: { ...RATE_LIMIT_FIELD, description: "This account's own budget (both windows); default: the service's 20 per 10 s and 100 per minute." },
          max_calls_in_parallel: { spec: { kind: 'integer', min: 1, max: 100_000 }, description: "Optional cap on this account's live calls over its campaigns.", example: 10 },
        },
      },
    },
    description: 'Several accounts at the service (README, "Many accounts"), each with its own token, rate budget and live-call cap, all at api.base_url; a campaign names its account.',
  },
  database: {
    spec: { kind: 'path' },
    default: './data/campaignd.db',
    description: 'SQLite file (created 0600) or ":memory:", or postgres://user@host:5432/db (no password here); env CAMPAIGND_DATABASE overrides.',
    example: './data/campaignd.db',
  },
  database_password_file: {
    spec: { kind: 'path' },
    description: 'PostgreSQL only: a file whose first line is the password (env PGPASSWORD overrides).',
    example: '/run/credentials/campaignd/pgpassword',
  },
  campaigns_dir: { spec: { kind: 'path' }, default: './campaigns', description: 'Folder of campaign files (*.yaml, *.yml, *.json).', example: './campaigns' },
  http: {
    spec: {
      kind: 'object',
      fields: {
        listen: { spec: { kind: 'listen' }, default: '127.0.0.1:9464', description: 'Address of /healthz, /readyz, /metrics, webhooks and the dashboard.', example: '127.0.0.1:9464' },
        dashboard_token_env: {
          spec: { kind: 'env-name' },
          description: 'Environment variable holding the dashboard token; required when listen is not a loopback address.',
          example: 'CAMPAIGND_DASHBOARD_TOKEN',
        },
      },
    },
    default: {},
    description: "The daemon's own HTTP endpoint.",
  },
  webhook: {
    spec: {
      kind: 'object',
      fields: {
        secret_env: { spec: { kind: 'env-name' }, default: 'CAMPAIGND_WEBHOOK_SECRET', description: 'Environment variable holding the post-call webhook secret.', example: 'CAMPAIGND_WEBHOOK_SECRET' },
        register: {
          spec: { kind: 'boolean' },
          default: false,
          description: "At start and on SIGHUP, point each campaign's assistant's post-call webhook (webhook_url) at this daemon.",
          example: true,
        },
        public_url: {
          spec: { kind: 'url' },
          description: 'The address the service reaches this daemon at, for webhook.register (default: http://HOST:PORT of http.listen, loopback only).',
          example: 'https://campaignd.example',
        },
      },
    },
    default: {},
    description: 'Post-call webhooks.',
  },
  max_calls_in_parallel: { spec: { kind: 'integer', min: 1, max: 100_000 }, description: 'Optional account-wide cap on live calls over all campaigns.', example: 50 },
  suppression_file: { spec: { kind: 'path' }, description: 'Optional do-not-call list, one E.164 number a line.', example: './dnc.txt' },
  calling_rules: { spec: { kind: 'path' }, description: 'Optional YAML rules by region for every campaign (README, "Who may be called, when"); they only narrow windows.', example: './calling-rules/us.yaml' },
  max_attempts_per_number: attemptCapField('Optional: at most count attempts to one number in any rolling window_hours, over all campaigns (README, "Who may be called, when").'),
  unknown_attempt_settle_seconds: { spec: { kind: 'integer', min: 1, max: 86_400 }, default: 180, description: 'How long an attempt with an unknown result waits for its call to appear before it counts as never placed (README, "How campaignd dials").', example: 180 },
  hooks: {
    spec: {
      kind: 'list',
      item: {
        kind: 'object',
        fields: {
          url: { spec: { kind: 'url' }, required: true, description: 'Where the events are POSTed (JSON).', example: 'https://crm.example/campaignd' },
          secret_env: { spec: { kind: 'env-name' }, required: true, description: 'Environment variable holding the secret that signs each delivery (X-Campaignd-Signature).', example: 'CRM_HOOK_SECRET' },
          events: {
            spec: { kind: 'list', item: { kind: 'enum', values: HOOK_EVENT_TYPES, noun: 'hook event' }, minItems: 1 },
            required: true,
            description: 'Which events this hook gets.',
            example: ['lead.final', 'attempt.ended', 'campaign.completed'],
          },
        },
      },
    },
    description: 'Results pushed to your systems (README, "Hooks: results pushed to your systems"): signed POSTs from an outbox, at least once, in order per lead.',
  },
  results: {
    spec: {
      kind: 'object',
      fields: {
        keep_transcripts: { spec: { kind: 'boolean' }, default: true, description: 'Store call transcripts (false: every other result is still kept).', example: true },
        retention_days: {
          spec: { kind: 'integer', min: 1, max: 36_500 },
          description: 'Erase personal data of calls (transcripts, recording URLs, extracted variables, lead variables) this many days after the call; counts stay. Absent: kept.',
          example: 90,
        },
      },
    },
    default: {},
    description: 'What campaignd keeps of each call (README, "Results").',
  },
  ha: {
    spec: {
      kind: 'object',
      fields: {
        lease_seconds: {
          spec: { kind: 'integer', min: 2, max: 300 },
          default: DEFAULT_LEASE_SECONDS,
          description:
            'PostgreSQL only: several `campaignd run` on one database, one active (README, "PostgreSQL and failover"). The active instance renews its lease every third of this; a standby takes over when it runs out, and places its first call within lease_seconds + 5 s of a crash.',
          example: 10,
        },
      },
    },
    default: {},
    description: 'Active and standby instances on one PostgreSQL database (ignored with SQLite: one daemon per file).',
  },
  log: {
    spec: { kind: 'object', fields: { level: { spec: { kind: 'enum', values: LOG_LEVELS, noun: 'log level' }, default: 'info', description: 'Log level; env CAMPAIGND_LOG_LEVEL overrides.', example: 'info' } } },
    default: {},
    description: 'Logging.',
  },
};

export const DAEMON_SPEC: Extract<Spec, { kind: 'object' }> = { kind: 'object', fields: DAEMON_FIELDS };
