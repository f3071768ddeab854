import type { Generated, Insertable, Selectable, Updateable } from 'kysely';
import type { CallResultsTable } from './results-types.js';
import type { HookOutboxTable, HookStatesTable, HookSubscriptionsTable } from './results-hook-types.js';

// Row types of migrations/0001_initial.ts and 0002_status_counts.ts. Times are epoch milliseconds.

export type CampaignState = 'running' | 'paused' | 'stopped' | 'completed';

export type LeadState =
  | 'pending'
  | 'calling'
  | 'retry-scheduled'
  | 'completed'
  | 'reached-max-retries'
  | 'invalid'
  | 'suppressed'
  /** Stopped by the caller (the API's DELETE, or a pre-dial check's refusal): no further attempt (migration 0016). */
  | 'cancelled'
  /** Continued in another campaign by an on_result `move_to` rule (README, "On the result"). */
  | 'moved';

export const ACTIVE_LEAD_STATES = ['pending', 'calling', 'retry-scheduled'] as const;
export const FINAL_LEAD_STATES = ['completed', 'reached-max-retries', 'invalid', 'suppressed', 'cancelled', 'moved'] as const;
/** Final states that end a lead's calls (the status pace counts them). */
export const FINISHED_LEAD_STATES = ['completed', 'reached-max-retries'] as const;
/** Lead states the claim query looks at. */
export const DUE_LEAD_STATES = ['pending', 'retry-scheduled'] as const;

export type AttemptState = 'dialing' | 'placed' | 'unknown' | 'ended' | 'rejected' | 'withdrawn' | 'never-placed';
/** Attempt states that hold a live-call slot (rule 2). */
export const LIVE_ATTEMPT_STATES = ['dialing', 'placed', 'unknown'] as const;

export type OutcomeClass =
  | 'success'
  | 'voicemail'
  | 'busy'
  | 'no-answer'
  | 'failed'
  | 'unknown'
  | 'rejected'
  | 'never-placed';

/**
 * Where an attempt's outcome came from. A `webhook` success is provisional (the payload
 * has no answered_by) until a poll confirms it (`poll`) or a complete call listing that
 * does not show the call leaves the webhook's word as final (`webhook-final`).
 */
export type OutcomeSource = 'webhook' | 'webhook-final' | 'poll' | 'answer' | 'timeout' | 'settle';

export interface CampaignsTable {
  id: Generated<number>;
  name: string;
  state: CampaignState;
  assistant_id: number;
  timezone: string | null;
  max_calls_in_parallel: number;
  remote_campaign_id: number | null;
  config_json: string;
  config_file: string | null;
  problem: string | null;
  created_at: number;
  updated_at: number;
  completed_at: number | null;
}

export interface LeadsTable {
  id: Generated<number>;
  campaign_id: number;
  dedupe_key: string;
  phone_number: string;
  variables_json: Generated<string>;
  timezone: string | null;
  state: LeadState;
  state_reason: string | null;
  next_due_at: number | null;
  contact_position: Generated<number>;
  contact_attempts: Generated<number>;
  remote_lead_id: number | null;
  source_file: string | null;
  source_line: number | null;
  created_at: number;
  updated_at: number;
  /** The caller's own id of a lead posted through the API, unique per campaign (migration 0015); null otherwise. */
  external_id: Generated<string | null>;
  /** The assistant variant given to the lead at its first claim (migration 0018); null before, and without variants. */
  variant: Generated<string | null>;
  /** Callbacks scheduled for the lead so far (migration 0020), bounded by callbacks.max_per_lead. */
  callbacks_given: Generated<number>;
}

/** 'dropped': the lead ended otherwise before the callback was placed (migration 0026). */
export type CallbackState = 'scheduled' | 'placed' | 'refused' | 'dropped';

/** A callback the person asked for, one per asking call (migration 0020). */
export interface CallbacksTable {
  id: Generated<number>;
  campaign_id: number;
  lead_id: number;
  /** The call whose extracted variable asked. */
  attempt_id: number;
  state: CallbackState;
  /** The person's words. */
  asked: string;
  /** The zone the words were read in (null when refused before a zone mattered). */
  zone: string | null;
  /** The moment the words name (null when refused). */
  asked_at: number | null;
  /** When the lead is due: the first allowed moment from asked_at (null when refused). */
  due_at: number | null;
  /** Why due_at differs from asked_at. */
  moved_reason: string | null;
  refused_reason: string | null;
  /** Why a scheduled callback was dropped: the lead's final state and its reason (migration 0026). */
  dropped_reason: Generated<string | null>;
  /** The callback call, once it ended. */
  placed_attempt_id: number | null;
  /** The asking call's extracted variables (previous.NAME of the callback call). */
  extracted_json: string | null;
  created_at: number;
  updated_at: number;
}

/** A lead's secondary numbers (positions 1..); the primary (position 0) is `leads.phone_number` (migration 0009). */
export interface LeadContactsTable {
  lead_id: number;
  /** 1.. in the order the lead's file gave them. */
  position: number;
  phone_number: string;
  remote_lead_id: number | null;
}

export interface AttemptsTable {
  id: Generated<number>;
  campaign_id: number;
  lead_id: number;
  contact_position: number;
  phone_number: string;
  assistant_id: number;
  state: AttemptState;
  counted: Generated<number>;
  call_id: string | null;
  call_status: string | null;
  answered_by: string | null;
  outcome: OutcomeClass | null;
  detail: string | null;
  outcome_source: OutcomeSource | null;
  created_at: number;
  sent_at: number | null;
  answered_at: number | null;
  ended_at: number | null;
  settle_deadline: number | null;
  owner: string | null;
  /** The lease token the claim was made under (PostgreSQL with several instances; migration 0008). */
  fence_token: number | null;
  /** The account whose lease the claim was made under (several active instances; migration 0023); null: the one lease of ha_lease. */
  fence_account: string | null;
}

export interface EventsTable {
  id: Generated<number>;
  at: number;
  campaign_id: number | null;
  lead_id: number | null;
  attempt_id: number | null;
  kind: string;
  data_json: string | null;
}

export interface SuppressionsTable {
  phone_number: string;
  source: string;
  added_at: number;
}

/**
 * Leads of a campaign in one state, kept by triggers (migration 0002); may reach 0. On
 * PostgreSQL in up to 8 rows per state, one per writing connection's `slot` (0037), each
 * of which may go below 0: the count is their sum.
 */
export interface LeadCountsTable {
  campaign_id: number;
  state: LeadState;
  /** PostgreSQL only (0037). */
  slot?: number;
  n: number;
}

/**
 * A campaign's spending, kept by triggers on call_results (migration 0028): bucket -1 is
 * the whole campaign, bucket B ≥ 0 the calls whose attempt was created in the quarter hour
 * from B (epoch ms).
 */
export interface CampaignSpendTable {
  campaign_id: number;
  bucket: number;
  spent: number;
  costed: number;
  largest: number;
}

/**
 * A campaign's per-variant figures, kept by triggers (migration 0031): the sums of its
 * leads' rows of lead_variant_figures; variant '' is the campaign's sum of all variants.
 */
export interface VariantCountsTable {
  campaign_id: number;
  variant: string;
  leads: number;
  calls: number;
  called_leads: number;
  reached_leads: number;
  cost: number;
  /** Leads with a counted reached call whose result has extracted variables, judged or not (migration 0035). */
  answered_leads: number;
}

/**
 * Per (campaign, variant, success_when key): the leads whose answered calls were all judged
 * under that key ('' when they disagree or one is not judged) and the successes among them (0035).
 */
export interface VariantSuccessesTable {
  campaign_id: number;
  variant: string;
  success_rule: string;
  leads: number;
  successes: number;
}

/** One lead's figures (leads holding a variant only), kept by triggers (migration 0031). */
export interface LeadVariantFiguresTable {
  lead_id: number;
  campaign_id: number;
  variant: string;
  calls: number;
  /** 1 when one of its ended, counted calls reached the person. */
  reached: number;
  cost: number;
  /** Its answered calls' common success_when key ('' when they differ or one is not judged; null: none) (0035). */
  success_rule: string | null;
  /** 1 when one of them was judged a success under that key. */
  success: number;
}

/** Attempts of a campaign, whatever their state, kept by triggers (migration 0002). */
export interface AttemptCountsTable {
  campaign_id: number;
  n: number;
}

export type ApiStatus = 'ok' | 'token-rejected' | 'unreachable' | 'unknown';

export interface DaemonsTable {
  instance_id: string;
  pid: number;
  hostname: string;
  version: string;
  started_at: number;
  heartbeat_at: number;
  stopped_at: number | null;
  api_status: ApiStatus;
  api_detail: string | null;
  problems_json: string | null;
  /** Rate-budget counters of this run (migration 0006), written with each heartbeat. */
  api_requests_sent: Generated<number>;
  api_rate_limited: Generated<number>;
  budget_wait_ms: Generated<number>;
  /** The daemon-wide max_calls_in_parallel this run dials under (migration 0011); null when not set. */
  max_calls_in_parallel: number | null;
  /** Where this daemon reads its API token, `file:PATH` or `env:NAME` (migration 0012); never the token. */
  token_source: Generated<string | null>;
  /** Each account's state (migration 0022): a JSON list of DaemonAccount (src/store/daemons.ts); null: written by an older daemon. */
  accounts_json: Generated<string | null>;
  /** How the instance dials on PostgreSQL (migration 0027): see DialingMode; null on SQLite and from an older daemon. */
  dialing_mode: Generated<DialingMode | null>;
}

/** 'one-lease': a standby pair, the active one dials every campaign; 'per-account': several active instances share the accounts. */
export type DialingMode = 'one-lease' | 'per-account';

/** The active instance's lease (src/store/lease.ts): one row, id 1. */
export interface HaLeaseTable {
  id: number;
  holder: string;
  token: number;
  /** Epoch ms by the database's clock. */
  expires_at: number;
}

/** A dashboard sign-in (src/store/dashboard-sessions.ts): only a keyed hash of its id. */
export interface DashboardSessionsTable {
  id_hash: string;
  /** Epoch ms. */
  created_at: number;
  /** Epoch ms; moved forward while the session is used. */
  expires_at: number;
}

/** An API key (src/store/api-keys.ts): never the key, only its hash and a short prefix of it. */
export interface ApiKeysTable {
  id: Generated<number>;
  /** Unique among the keys not revoked. */
  name: string;
  scope: ApiKeyScope;
  /** The key's first characters, not secret: shown by `api-key list`, and how a request's key is found. */
  prefix: string;
  /** Hex SHA-256 of the whole key. */
  key_hash: string;
  /** Epoch ms. */
  created_at: number;
  /** Epoch ms of a request with the key, written at most once a minute; null: never used. */
  last_used_at: number | null;
  /** Epoch ms; null while the key works. */
  revoked_at: number | null;
}

/** What a key may do: `read` the API's GET routes, or `write` (which includes read). */
export type ApiKeyScope = 'read' | 'write';

/** Each campaign's pre-dial checks (migration 0016; src/store/predial-counts.ts), for `status`. */
export interface PredialCountsTable {
  campaign_id: number;
  checks: Generated<number>;
  failures: Generated<number>;
  /** Epoch ms of the last failed check; null before the first. */
  last_failure_at: number | null;
  last_failure_detail: string | null;
}

/** The answer to an API request that carried an Idempotency-Key (migration 0015; src/store/idempotency.ts). */
export interface ApiIdempotencyTable {
  /** The API key's name; '' when the API runs without keys. */
  owner: string;
  idempotency_key: string;
  request_hash: string;
  status: number;
  response_json: string;
  /** Epoch ms. */
  created_at: number;
  /** Epoch ms. */
  expires_at: number;
}

/** One account's lease (several active instances; migration 0023, src/store/account-leases.ts). */
export interface AccountLeasesTable {
  account: string;
  /** null once released (and before anyone took it). */
  holder: string | null;
  /** Raised by one at every taking: the fencing token claims for the account carry. */
  fence: number;
  /** Epoch ms by the clock leases are judged with (the database's). */
  expires_at: number;
  taken_at: number;
  /** Migration 0030: the holder's requests of the last minute, as ages in ms (JSON), written at `recent_requests_at` (the database's clock). */
  recent_requests: string | null;
  recent_requests_at: number | null;
}

/** A post-call delivery waiting for the instance holding its account (migration 0034, src/store/webhook-inbox.ts). */
export interface WebhookInboxTable {
  id: Generated<number>;
  account: string;
  /** Epoch ms, the receiving instance's clock. */
  received_at: number;
  /** The delivery's JSON as it came. */
  payload: string;
}

/** An instance taking part in sharing the accounts, renewed with its leases (migration 0023). */
export interface LeaseInstancesTable {
  instance_id: string;
  joined_at: number;
  expires_at: number;
}

export interface Database {
  campaigns: CampaignsTable;
  leads: LeadsTable;
  lead_contacts: LeadContactsTable;
  attempts: AttemptsTable;
  events: EventsTable;
  suppressions: SuppressionsTable;
  daemons: DaemonsTable;
  lead_counts: LeadCountsTable;
  attempt_counts: AttemptCountsTable;
  campaign_spend: CampaignSpendTable;
  variant_counts: VariantCountsTable;
  lead_variant_figures: LeadVariantFiguresTable;
  variant_successes: VariantSuccessesTable;
  call_results: CallResultsTable;
  hook_subscriptions: HookSubscriptionsTable;
  hook_outbox: HookOutboxTable;
  hook_states: HookStatesTable;
  ha_lease: HaLeaseTable;
  account_leases: AccountLeasesTable;
  webhook_inbox: WebhookInboxTable;
  lease_instances: LeaseInstancesTable;
  dashboard_sessions: DashboardSessionsTable;
  api_keys: ApiKeysTable;
  predial_counts: PredialCountsTable;
  api_idempotency: ApiIdempotencyTable;
  callbacks: CallbacksTable;
}

export type CampaignRow = Selectable<CampaignsTable>;
export type LeadRow = Selectable<LeadsTable>;
export type NewLead = Insertable<LeadsTable>;
export type LeadUpdate = Updateable<LeadsTable>;
export type LeadContactRow = Selectable<LeadContactsTable>;
export type AttemptRow = Selectable<AttemptsTable>;
export type NewAttempt = Insertable<AttemptsTable>;
export type EventRow = Selectable<EventsTable>;
export type DaemonRow = Selectable<DaemonsTable>;
