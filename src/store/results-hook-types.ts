// Row types of the hook tables of migrations/0007_hooks.ts. Times are epoch milliseconds.

export const HOOK_EVENT_TYPES = ['attempt.ended', 'lead.final', 'lead.moved', 'lead.callback_scheduled', 'campaign.completed'] as const;
export type HookEventType = (typeof HOOK_EVENT_TYPES)[number];

export interface HookSubscriptionsTable {
  hook_url: string;
  type: HookEventType;
}

export interface HookOutboxTable {
  id: import('kysely').Generated<number>;
  hook_url: string;
  event_id: string;
  type: HookEventType;
  campaign_id: number | null;
  lead_id: number | null;
  created_at: number;
  /** The JSON body; null once erased. */
  body: string | null;
  tries: import('kysely').Generated<number>;
  next_try_at: number;
  last_error: string | null;
}

export interface HookStatesTable {
  hook_url: string;
  disabled_at: number | null;
  disabled_reason: string | null;
}
