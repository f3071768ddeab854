// The normalised configuration: what the rest of campaignd sees after a file was read
// as written, defaults were filled and every rule was checked. Paths are absolute.

import type { LeadColumns } from '../leads/columns.js';
import type { CallingPolicy } from '../rules/types.js';
import type { ParsedSource } from './source.js';
import type { Weekday } from '../time/window.js';
import type { ResultRule } from './result-rule-types.js';
import type { HookEventType } from '../store/results-hook-types.js';

export type { Weekday };
export const WEEKDAY_NAMES = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'] as const;
export type WeekdayName = (typeof WEEKDAY_NAMES)[number];

/** The outcome classes that `retry_on` may list (rule 5). */
export const RETRYABLE_CLASSES = ['busy', 'no-answer', 'failed', 'voicemail'] as const;
export type RetryableClass = (typeof RETRYABLE_CLASSES)[number];

export interface DaemonConfig {
  /** Absolute path of the daemon file this was read from. */
  file: string;
  api: {
    baseUrl: string;
    /** Absolute path of the token file, when the token comes from a file. */
    tokenFile?: string;
    /** Both sliding windows of the service's limiter (docs/design.md §5). */
    rateLimit: { requestsPerMinute: number; burst: number; burstWindowSeconds: number };
    /** Zone of the service's zone-less "YYYY-MM-DD HH:MM:SS" timestamps. */
    serverTimezone: string;
  };
  /** Absolute path of the SQLite file, or ':memory:'. */
  database: string;
  /** PostgreSQL password file (absolute); PGPASSWORD overrides it. */
  databasePasswordFile?: string;
  campaignsDir: string;
  /** dashboardTokenEnv: the variable holding the dashboard token (read by the composition root only). */
  http: { host: string; port: number; dashboardTokenEnv?: string };
  /** register: point each campaign's assistant's webhook_url at this daemon (at publicUrl, else http.listen's address). */
  webhook: { secretEnv: string; register?: boolean; publicUrl?: string };
  /** Account-wide cap on live calls over all campaigns. */
  maxCallsInParallel?: number;
  /** Several accounts at the service (accounts: in the file); absent: the api: block is the one account (accounts.ts). */
  accounts?: AccountConfig[];
  suppressionFile?: string;
  /** Who may be called (docs/design.md §11): calling_rules (absolute path) and max_attempts_per_number of the daemon file, for every campaign. */
  callingRulesFile?: string;
  maxAttemptsPerNumber?: { count: number; windowHours: number };
  unknownAttemptSettleSeconds: number;
  log: { level: string };
  /** What is kept of each call (docs/design.md §9); retentionDays null keeps it; absent: all kept. */
  results?: { keepTranscripts: boolean; retentionDays: number | null };
  /** Active and standby on PostgreSQL (docs/design.md §10); the loader fills the default lease. */
  ha: { leaseSeconds: number };
  /** Where results are pushed (docs/design.md §9); absent or empty: nowhere. */
  hooks?: { url: string; secretEnv: string; events: HookEventType[] }[];
}

/** One account at the service: its token, its own rate budget and live-call cap. */
export interface AccountConfig {
  name: string;
  /** Exactly one of: an absolute token file, or an environment variable holding the token. */
  tokenFile?: string;
  tokenEnv?: string;
  rateLimit: { requestsPerMinute: number; burst: number; burstWindowSeconds: number };
  maxCallsInParallel?: number;
}

/** One assistant variant of an A/B test (`assistants:` in the campaign file). */
export interface AssistantVariant {
  name: string;
  assistantId: number;
  weight: number;
}

/** What counts as a success when comparing variants: the extracted variable has one of the values (store/variable-match.ts). */
export interface SuccessWhen {
  variable: string;
  values: string[];
}

export interface CampaignConfig {
  name: string;
  /** The account it dials under (account:); absent: the daemon's only account. */
  account?: string;
  /** Absolute path of the campaign file. */
  file: string;
  /** The assistant (with variants: the first variant's, for the window's zone and the service's campaign checks). */
  assistantId: number;
  /** Assistant variants, in file order; absent when the file gives assistant_id. */
  variants?: AssistantVariant[];
  /** Success for the variants' figures; absent: the call reached the person (outcome success). */
  successWhen?: SuccessWhen;
  /** IANA zone of the window; undefined means "the assistant's timezone". */
  timezone?: string;
  allowedDays: Weekday[];
  /** Seconds after local midnight. */
  allowedHoursStart: number;
  allowedHoursEnd: number;
  maxCallsInParallel: number;
  maxRetries: number;
  retryIntervalSeconds: number;
  markCompleteWhenNoLeads: boolean;
  retryOn: RetryableClass[];
  /** Whole local days without calls, `YYYY-MM-DD`. */
  blackoutDates: string[];
  /** The called person's local hours, in seconds after midnight. */
  leadLocalHours?: { start: number; end: number };
  initialStatus: 'running' | 'paused';
  leads: { file?: string; remoteCampaignId?: number };
  /** Which headers of the lead file hold what (lead_columns, docs/design.md §2.3). */
  leadColumns?: LeadColumns;
  /** ISO 3166 alpha-2 country for national-format numbers. */
  defaultCountry?: string;
  allowDuplicates: boolean;
  /** Who may be called (docs/design.md §11): calling_rules and max_attempts_per_number, the daemon's and the campaign's together. */
  callingPolicy?: CallingPolicy;
  /** Who may be called (docs/design.md §11): the campaign's calling_rules file (absolute); its rules are in callingPolicy once loaded. */
  callingRulesFile?: string;
  /** Caps on spending (README, "Budgets"); absent: no cap. */
  budget?: CampaignBudget;
  /** Opt-outs (docs/design.md §11): an extracted variable that puts the number on the suppression list. */
  optOut?: { variable: string; values: string[] };
  /** The pre-dial check (README, "Pre-dial check"): asked before each call, which is placed only on its yes. */
  predial?: PredialConfig;
  /** Rules on the result (README, "On the result"), in file order; absent: the retry settings decide alone. */
  onResult?: ResultRule[];
  /** The extracted variables the campaign expects (extracted_variables), when declared. */
  extractedVariables?: string[];
  /** Callbacks the person asks for (README, "Callbacks the person asks for"); absent: none are scheduled. */
  callbacks?: CallbackConfig;
}

/** Where the asked time is read from, and the bounds on callbacks. */
export interface CallbackConfig {
  /** The extracted variable holding the asked time. */
  variable: string;
  maxPerLead: number;
  horizonDays: number;
}

export interface PredialConfig {
  url: string;
  /** The variable holding the signing secret (read by the composition root only). */
  secretEnv: string;
  timeoutMs: number;
}

/** A campaign's budget, in the service's currency; at least one cap is set. */
export interface CampaignBudget {
  maxCost: number | null;
  /** Per day, the campaign's day in its zone. */
  maxCostPerDay: number | null;
  /** What a call counts for until a call's cost is known (one call at a time until then). */
  assumedCostPerCall: number;
}

/** One problem found in a file: everything a person needs to fix it. */
export interface ConfigProblem {
  file: string;
  line?: number;
  column?: number;
  /** Dotted path of the field, e.g. `leads.file` or `allowed_days[2]`. */
  field?: string;
  message: string;
  /** How to fix it. */
  hint?: string;
  /** Errors stop a campaign (or the daemon); warnings do not. */
  severity: 'error' | 'warning';
}

export interface LoadedConfig {
  daemon: DaemonConfig;
  /** Campaigns whose files are valid. */
  campaigns: CampaignConfig[];
  /** Every problem found, in the daemon file, campaign files and lead files. */
  problems: ConfigProblem[];
  /** Campaign names (or file names) that are broken and will not run. */
  brokenCampaigns: { name: string; file: string }[];
  /** Positions in the daemon file, for checks made after loading (start-checks.ts). */
  daemonSource?: Pick<ParsedSource, 'locate'>;
}
