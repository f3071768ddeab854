/**
 * Value sets of the Voice Assistant Calling Service, shared by the client, the
 * simulator and the engine so that none of them spells a status differently.
 */

/** Every call status the spec lists (spec section 3). */
export const CALL_STATUSES = [
  'initiated',
  'ringing',
  'busy',
  'in-progress',
  'ended',
  'completed',
  'ended_by_customer',
  'ended_by_assistant',
  'no-answer',
  'failed',
] as const;
export type CallStatus = (typeof CALL_STATUSES)[number];

/** Statuses of a call that has not ended yet (rule 5, docs/design.md §3.5). */
export const IN_PROGRESS_STATUSES = ['initiated', 'ringing', 'in-progress'] as const;

/** Statuses after which a call never changes again. */
export const FINAL_CALL_STATUSES = [
  'busy',
  'ended',
  'completed',
  'ended_by_customer',
  'ended_by_assistant',
  'no-answer',
  'failed',
] as const;

/** Final statuses in which somebody (person or machine) picked up. */
export const CONNECTED_CALL_STATUSES = ['completed', 'ended', 'ended_by_customer', 'ended_by_assistant'] as const;

/** True when the status is one of the in-progress ones. */
export function isInProgressStatus(status: string): boolean {
  return (IN_PROGRESS_STATUSES as readonly string[]).includes(status);
}

/** True when the status is a known final one. */
export function isFinalStatus(status: string): boolean {
  return (FINAL_CALL_STATUSES as readonly string[]).includes(status);
}

export const CALL_TYPES = ['inbound', 'outbound', 'web'] as const;
export type CallType = (typeof CALL_TYPES)[number];

export const ANSWERED_BY = ['human', 'machine', 'unknown'] as const;

export const ASSISTANT_TYPES = ['inbound', 'outbound'] as const;
export const ASSISTANT_STATUSES = ['active', 'inactive'] as const;
export const ENGINE_MODES = ['pipeline', 'multimodal'] as const;
export type EngineMode = (typeof ENGINE_MODES)[number];
export const ENDPOINT_TYPES = ['vad', 'ai'] as const;
export const CALLS_DIRECTIONS = ['receive', 'make'] as const;
export const WHO_SPEAKS_FIRST = ['AI assistant', 'Customer'] as const;
export const POST_CALL_SCHEMA_TYPES = ['string', 'number', 'bool'] as const;

export const TOOL_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
export const TOOL_SCHEMA_TYPES = ['string', 'number', 'boolean'] as const;
/** Default tool timeout in seconds (spec 2.1). */
export const TOOL_TIMEOUT_DEFAULT = 10;
/** Example plan limit of mid call tools per account (spec section 8). */
export const TOOL_PLAN_LIMIT_DEFAULT = 5;

/** Lead statuses seen (the spec's section 3 and the live service, listed in docs/simulator.md). */
export const LEAD_STATUSES = [
  'created',
  'scheduled',
  'processing',
  'completed',
  'rescheduled',
  'reached-max-retries',
  'blacklisted',
  'contacted',
] as const;

/** Campaign statuses seen (the spec's section 3 and the live service, listed in docs/simulator.md). */
export const CAMPAIGN_STATUSES = ['draft', 'in-progress', 'stopped', 'active'] as const;
export const CAMPAIGN_ACTIONS = ['start', 'stop'] as const;

export const PHONE_TYPE_LABELS = ['Normal', 'SIP', 'Caller ID'] as const;
export const PHONE_LIST_TYPES = ['inbound', 'outbound'] as const;

export const WEEKDAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'] as const;

/** Page-size bounds and defaults (spec section 8). */
export const CALLS_PER_PAGE = { min: 1, max: 100, default: 15 } as const;
export const ASSISTANTS_PER_PAGE = { min: 1, max: 100, default: 10 } as const;

/** E.164 as the spec's request rules state it. */
export const E164_PATTERN = /^\+[1-9]\d{6,14}$/;
