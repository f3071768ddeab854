import type { Clock } from '../time/clock.js';
import type { Logger } from '../log/logger.js';
import type { Conversation, ScenarioChoice, ScenarioName } from './conversations.js';

// Internal records of the simulator. Field names follow the spec's records (spec section 2)
// so that shaping a response is mostly picking fields; `userId` and friends are the
// simulator's own bookkeeping and never leave through /api/user.

/** The outcome kinds a call can be drawn from. */
export const OUTCOME_NAMES = ['human', 'voicemail', 'busy', 'no-answer', 'failed'] as const;
export type OutcomeName = (typeof OUTCOME_NAMES)[number];

/** Options of startSimulator. */
export interface SimulatorOptions {
  host?: string;
  port?: number;
  /** One user per token; default: one random token. */
  tokens?: string[];
  clock: Clock;
  /** Clock for real network waits (fault latency, webhook timeout); defaults to `clock`. */
  networkClock?: Clock;
  seed?: number;
  /** Answer make_call with `call_id` and `status` as the public docs show. */
  callIdInResponse?: boolean;
  rateLimit?: RateLimitOptions | null;
  /** Shares of each outcome; missing names keep their default share. */
  outcomes?: Partial<Record<OutcomeName, number>>;
  /** Talk time of answered calls, in simulated seconds. */
  callDurationSeconds?: { min: number; max: number };
  /**
   * The conversation every answered call plays (a scenario of conversations.ts, or `mix`), unless
   * its number has its own (`POST /__sim/conversations`); absent: none, the assistant extracts
   * only its post_call_schema's placeholder values.
   */
  conversations?: ScenarioChoice;
  /** Shares of the scenarios in `mix`; missing names keep their default share. */
  conversationMix?: Partial<Record<ScenarioName, number>>;
  /** Mid call tools per account (the plan limit of spec section 8). */
  toolLimit?: number;
  /** Answer GET /api/user/leads with the pagination envelope instead of a plain array. */
  leadsPaginated?: boolean;
  /** What a missing or bad token gets: 401 JSON (documented) or a 302 to a login page. */
  badTokenAnswer?: 'json401' | 'redirect302';
  /** Timeout of one webhook delivery, in networkClock milliseconds. */
  webhookTimeoutMs?: number;
  logger?: Logger;
}

export interface RateLimitOptions {
  perMinute: number;
  burst: number;
  burstWindowSeconds: number;
  /**
   * Seconds a token is refused outright after it tripped the limiter (the live service
   * answers `retry_after: 60`: a trip costs a whole minute). 0 or absent: no lockout,
   * only the windows.
   */
  lockoutSeconds?: number;
}

/** What the limiter did, for tests (`state.rateLimitStats`, `GET /__sim/stats`). */
export interface RateLimitStats {
  /** Requests the limiter let through. */
  allowed: number;
  /** Requests that went over a window: the trips a client must never cause. */
  trips: number;
  /** Every request the limiter refused (trips, and refusals during a lockout). */
  refused: number;
  /** 429s injected as faults through /__sim/faults (not the limiter's doing). */
  injected: number;
}

export interface SimUser {
  index: number;
  id: number;
  token: string;
  /** Tests may revoke a token to see how a client copes (see /__sim/auth). */
  tokenValid: boolean;
}

export interface ToolHeader {
  name: string;
  value: string;
}
export interface ToolSchemaItem {
  name: string;
  type: string;
  description: string;
}

export interface SimTool {
  id: number;
  userId: number;
  name: string;
  description: string;
  endpoint: string;
  method: string;
  timeout: number;
  headers: ToolHeader[];
  schema: ToolSchemaItem[];
  createdAt: number;
  updatedAt: number;
}

export interface SimCampaign {
  id: number;
  userId: number;
  name: string;
  status: string;
  max_calls_in_parallel: number;
  mark_complete_when_no_leads: boolean;
  allowed_hours_start_time: string;
  allowed_hours_end_time: string;
  allowed_days: string[];
  max_retries: number;
  retry_interval: number;
  createdAt: number;
  updatedAt: number;
}

export interface SimLead {
  id: number;
  userId: number;
  campaignId: number;
  phone_number: string;
  variables: Record<string, unknown>;
  status: string;
  /** The main lead of a secondary contact; null for a main lead. */
  parentId: number | null;
  secondaryIds: number[];
  createdAt: number;
  updatedAt: number;
}

export interface SimPhoneNumber {
  id: number;
  userId: number;
  phone_number: string;
  country_code: string;
  type_label: 'Normal' | 'SIP' | 'Caller ID';
}

export interface SimVoice {
  id: number;
  name: string;
  mode: 'pipeline' | 'multimodal';
  /** null: public. */
  ownerId: number | null;
}

export interface SimModel {
  id: number;
  name: string;
}

/** The assistant: the full record of spec 2.4 minus the derived `tools`, plus owner. */
export interface SimAssistant {
  id: number;
  userId: number;
  toolIds: number[];
  createdAt: number;
  updatedAt: number;
  /** Everything else of the record, keyed by record field name. */
  fields: AssistantFields;
}

export interface AssistantFields {
  phone_number_id: number | null;
  engine_id: number | null;
  synthesizer_id: number | null;
  transcriber_id: number | null;
  voice_id: number;
  instance_id: number;
  name: string;
  variables: Record<string, unknown>;
  post_call_evaluation: boolean;
  fillers: number;
  post_call_schema: { name: string; type: string; description: string }[];
  is_webhook_active: boolean;
  webhook_url: string | null;
  inbound_webhook_url: string | null;
  language: string | null;
  type: 'inbound' | 'outbound';
  status: 'active' | 'inactive';
  max_duration: number;
  record: boolean;
  initial_message: string;
  system_prompt: string;
  flows_platform_id: number | null;
  timezone: string;
  max_silence_duration: number;
  reengagement_interval: number;
  deleted_at: string | null;
  end_call_on_voicemail: number;
  llm_temperature: string;
  voice_stability: string;
  voice_similarity: string;
  allow_interruptions: boolean;
  enable_noise_cancellation: boolean;
  endpoint_sensitivity: number;
  speech_speed: string;
  endpoint_type: 'vad' | 'ai';
  wait_for_customer: boolean;
  mode: 'pipeline' | 'multimodal';
  language_id: number;
  transcriber_provider_id: number | null;
  synthesizer_provider_id: number | null;
  llm_model_id: number;
  multimodal_model_id: number | null;
  ambient_sound: string;
  uuid: string;
  send_webhook_only_on_completed: boolean;
  include_recording_in_webhook: boolean;
  interrupt_sensitivity: number;
  filler_config: { neutral: string[]; negative: string[]; positive: string[]; question: string[] };
  knowledgebase_id: number;
  knowledgebase_mode: string;
  min_interrupt_words: number;
  use_min_interrupt_words: boolean;
  ambient_sound_volume: string;
  widget_settings: Record<string, unknown>;
  end_call_tool: { description: string };
}

/** A fixed outcome for a number, set through /__sim/outcomes. */
export interface FixedOutcome {
  /** A final call status, or `in-progress` for a call that never ends. */
  status: string;
  answered_by: 'human' | 'machine' | 'unknown' | null;
  /** Talk seconds (answered) or ringing seconds (not answered). */
  duration: number | null;
  /** How many more calls this applies to; Infinity: until reset. */
  remaining: number;
}

export interface TimelineEntry {
  status: string;
  at: number;
}

export interface SimCall {
  id: number;
  userId: number;
  userIndex: number;
  assistantId: number;
  campaignId: number | null;
  leadId: number | null;
  type: 'inbound' | 'outbound' | 'web';
  client_phone_number: string;
  assistant_phone_number: string;
  status: string;
  answered_by: 'human' | 'machine' | 'unknown' | null;
  duration: number;
  transcript: string;
  variables: Record<string, unknown>;
  input_variables: Record<string, unknown>;
  evaluation: Record<string, unknown>;
  webhook_response: Record<string, unknown>;
  carrier_cost: number;
  total_cost: number;
  recording_url: string | null;
  createdAt: number;
  updatedAt: number;
  finishedAt: number | null;
  /** The outcome drawn at creation, played out by the lifecycle. */
  plan: CallPlan;
  /** What the person will say if they answer (drawn at creation); null: no conversation. */
  conversation: Conversation | null;
  timeline: TimelineEntry[];
}

export interface CallPlan {
  outcome: OutcomeName | 'fixed' | 'hang';
  finalStatus: string;
  answeredBy: 'human' | 'machine' | 'unknown' | null;
  ringSeconds: number;
  /** Seconds in `in-progress`; 0 when the call never connects. */
  talkSeconds: number;
}

export interface WebhookDelivery {
  callId: number;
  userIndex: number;
  url: string;
  payload: Record<string, unknown>;
  at: number;
  /** When the receiver's answer (or the failure) came, on the same clock as `at`; null while in flight. */
  answeredAt: number | null;
  status: number | null;
  response: unknown;
  error: string | null;
}
