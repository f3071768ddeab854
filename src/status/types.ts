import type { ApiStatus, CampaignState } from '../store/types.js';
import type { AccountStatus } from './accounts.js';
import type { HookStatus } from '../hooks/status.js';

// The document `campaignd status --json` prints. Keys are snake_case and stable: scripts
// and monitoring read them (docs/design.md §7 lists the required ones; the rest are
// additions). Instants are ISO-8601 strings: in the campaign's zone for campaign facts,
// UTC for daemon facts.

export interface DaemonStatus {
  /** A daemon row with a heartbeat in the last 10 s, not stopped, and (on this host) a live pid. */
  running: boolean;
  pid: number | null;
  /** The daemon's version when one has run, else this campaignd's. */
  version: string;
  /** Token/API state while running; 'unknown' when no daemon runs. */
  api: ApiStatus;
  api_detail: string | null;
  /** Where the daemon reads its API token: `file:PATH` or `env:NAME` (never the token); null when not recorded. */
  token_source?: string | null;
  hostname: string | null;
  started_at: string | null;
  heartbeat_at: string | null;
  stopped_at: string | null;
  /** Problems of the daemon's last config load (broken campaign files…). */
  problems: unknown[];
  /** Requests to the service since this daemon started (its last heartbeat's figures). */
  api_requests: ApiRequestCounts;
  /** The pid of the instance that claims and dials (docs/design.md §10); null when none does. */
  active_pid: number | null;
  /** Every running instance on this database: one on SQLite, one active and standbys on PostgreSQL. */
  instances: InstanceStatus[];
  /**
   * The daemon-wide limit of live calls over all campaigns, as written in the daemon's row
   * when it started (the running daemon's, else the last one's); null when not set.
   */
  max_calls_in_parallel: number | null;
  /** Live attempts over all campaigns (whatever CAMPAIGN was asked for): what that limit counts. */
  live_calls: number;
}

export interface InstanceStatus {
  pid: number;
  hostname: string;
  role: 'active' | 'standby';
  heartbeat_at: string;
}

export interface ApiRequestCounts {
  /** Requests the rate budget let through. */
  sent: number;
  /** 429 answers received. */
  rate_limited: number;
  /** Seconds requests waited for the rate budget, summed. */
  budget_wait_seconds: number;
}

export interface LeadCounts {
  total: number;
  pending: number;
  calling: number;
  retry_scheduled: number;
  completed: number;
  reached_max_retries: number;
  invalid: number;
  suppressed: number;
  /** Stopped by the caller (the API or a pre-dial check): no further attempt. */
  cancelled: number;
  /** Continued in another campaign by an on_result `move_to` rule (README, "On the result"). */
  moved: number;
  /**
   * Of `completed`, the leads whose success only a webhook has reported so far: the call
   * list may still say a machine answered (a voicemail, retried). Not counted twice in `total`.
   */
  confirming: number;
}

export interface WindowStatus {
  /** Null when the campaign's zone is not known yet (it comes from the assistant). */
  open: boolean | null;
  /** The next opening when closed; null when open or never. */
  next_open_at: string | null;
  /** When an open window closes; null when closed. */
  closes_at: string | null;
  timezone: string | null;
}

export interface CampaignStatus {
  name: string;
  state: CampaignState;
  window: WindowStatus;
  live_calls: number;
  max_calls_in_parallel: number;
  leads: LeadCounts;
  attempts: { total: number; today: number };
  /** What stops this campaign (bad file, unknown assistant…), null when fine. */
  problem: string | null;
  /** completed / (completed + reached_max_retries); null before any lead is finished. */
  success_rate: number | null;
  /** When the active leads are done at the pace of the last hour; null when idle or done. */
  estimated_finish_at: string | null;
  /** Leads finished in the last hour; the estimate divides by the part of the hour the campaign dialed. */
  completions_last_hour: number;
  /** Assistant variants (README, "Assistant variants"): present only for a campaign that has them. */
  variants?: VariantStatus[];
  /** Two-sided p-value of the difference between the variants' success rates; null with fewer than two variants called. */
  variants_p_value?: number | null;
  /** Whether that difference is significant at the 5 % level. */
  variants_significant?: boolean;
  /** The campaign's pre-dial check (README, "Pre-dial check"); absent when it has none. */
  predial?: PredialStatus;
  /** Spending against the campaign's budget (README, "Budgets"); absent without a budget. */
  budget?: BudgetStatus;
  /**
   * Callbacks the person asked for (README, "Callbacks the person asks for"), one per asking
   * call: still to place, placed, refused, or dropped (the lead ended otherwise first); absent without callbacks.
   */
  callbacks?: { scheduled: number; placed: number; refused: number; dropped: number };
}

export interface PredialStatus {
  /** Checks asked since the campaign first had one. */
  checks: number;
  /** Of them, those that gave no usable answer (timeout, error, non-2xx, not understood): the lead waited. */
  failures: number;
  last_failure: { at: string; detail: string } | null;
}

/** One assistant variant's figures. Rates are over the leads called; successes count leads, not calls. */
export interface VariantStatus {
  name: string;
  assistant_id: number;
  weight: number;
  /** Leads given this variant (at their first claim). */
  leads: number;
  /** Ended, counted calls. */
  calls: number;
  /** Leads with at least one ended call: the rate's denominator. */
  called_leads: number;
  /** Leads a call reached (outcome success). */
  reached: number;
  /** Leads that succeeded (success_when, else reached). */
  successes: number;
  success_rate: number | null;
  /** 95 % Wilson interval of the success rate, [lo, hi]; null before any call. */
  interval: [number, number] | null;
  /** Sum of the calls' known costs. */
  cost: number;
  cost_per_success: number | null;
}

export interface VariantComparison {
  variants: VariantStatus[];
  p_value: number | null;
  significant: boolean;
}

/** Amounts in the service's currency. */
export interface BudgetStatus {
  max_cost: number | null;
  max_cost_per_day: number | null;
  spent: number;
  spent_today: number;
  /** max_cost less spent (null without max_cost). */
  remaining: number | null;
  /** What the leads still to call would cost at the mean cost per call so far. */
  projected: number;
  /** A cap holds the campaign: no call could be placed without the risk of going over. */
  paused: boolean;
}

export interface StatusReport {
  daemon: DaemonStatus;
  campaigns: CampaignStatus[];
  /** Hooks with undelivered events or disabled (docs/design.md §9); absent when none. */
  hooks?: HookStatus[];
  /** Each account the running daemons dial (README, "Many accounts"); absent when no running daemon wrote them. */
  accounts?: AccountStatus[];
}
