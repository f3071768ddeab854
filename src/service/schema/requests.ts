import { z } from 'zod';
import {
  ASSISTANTS_PER_PAGE,
  CALLS_DIRECTIONS,
  CALLS_PER_PAGE,
  CALL_STATUSES,
  CALL_TYPES,
  CAMPAIGN_ACTIONS,
  E164_PATTERN,
  ENDPOINT_TYPES,
  ENGINE_MODES,
  PHONE_LIST_TYPES,
  POST_CALL_SCHEMA_TYPES,
  TOOL_METHODS,
  TOOL_SCHEMA_TYPES,
  WHO_SPEAKS_FIRST,
} from './constants.js';
import { boolField, dateField, intField, numField, objectField, strField, timezoneField, urlField } from './fields.js';

/**
 * Request schemas with every rule the spec states (spec sections 2.1, 4 and 8). The simulator
 * validates requests with them; the client takes their output types as its inputs, so
 * the two cannot drift apart. Query schemas read the string values of a query string
 * and fill the spec's defaults.
 */

export * from './constants.js';
export { fieldErrors } from './field-errors.js';

const e164 = () => z.string().regex(E164_PATTERN, { error: 'must be a valid E.164 phone number' });

// ---- Mid call tools (4.1, 4.2; rules of 2.1) ----

/** Tool `headers` item: both fields required. */
export const toolHeaderInput = z.object({ name: z.string().min(1), value: z.string() });

/** Tool `schema` item: name 2–32 chars starting with a letter, type enum, description 3–255. */
export const toolParameterInput = z.object({
  name: z
    .string()
    .min(2)
    .max(32)
    .regex(/^[A-Za-z][A-Za-z_]*$/, { error: 'must start with a letter and contain only letters and underscores' }),
  type: z.enum(TOOL_SCHEMA_TYPES),
  description: z.string().min(3).max(255),
});

const toolFields = {
  name: z.string().regex(/^[a-z][a-z_]*$/, {
    error: 'must start with a letter and contain only lowercase letters and underscores',
  }),
  description: z.string().max(255),
  endpoint: urlField(),
  method: z.enum(TOOL_METHODS),
  timeout: intField(1, 30).optional(),
  headers: z.array(toolHeaderInput).optional(),
  schema: z.array(toolParameterInput).optional(),
};

/** POST /api/user/tools body. */
export const createToolRequest = z.object(toolFields);
export type CreateToolRequest = z.output<typeof createToolRequest>;

/** PUT /api/user/tools/{id} body: the same fields, all optional. */
export const updateToolRequest = z.object(toolFields).partial();
export type UpdateToolRequest = z.output<typeof updateToolRequest>;

// ---- Leads and campaigns (4.3, 4.6) ----

/** Secondary contact given at lead creation. */
export const secondaryContactInput = z.object({ phone_number: e164(), variables: objectField().optional() });

/** POST /api/user/lead body. */
export const createLeadRequest = z.object({
  phone_number: e164(),
  campaign_id: intField(1),
  variables: objectField().optional(),
  allow_dupplicate: boolField().optional(),
  secondary_contacts: z.array(secondaryContactInput).optional(),
});
export type CreateLeadRequest = z.output<typeof createLeadRequest>;

/** POST /api/user/campaigns/update-status body. */
export const updateCampaignStatusRequest = z.object({
  campaign_id: intField(1),
  action: z.enum(CAMPAIGN_ACTIONS),
});
export type UpdateCampaignStatusRequest = z.output<typeof updateCampaignStatusRequest>;

// ---- Calls (4.7, 4.8) ----

/** POST /api/user/make_call body. */
export const makeCallRequest = z.object({
  phone_number: e164(),
  assistant_id: intField(1),
  variables: objectField().optional(),
});
export type MakeCallRequest = z.output<typeof makeCallRequest>;

/** GET /api/user/calls query (names the live service uses, listed in docs/simulator.md); fills per_page 15 and page 1. */
export const listCallsQuery = z.object({
  status: z.enum(CALL_STATUSES).optional(),
  type: z.enum(CALL_TYPES).optional(),
  phone_number: z.string().optional(),
  assistant_id: intField(1).optional(),
  campaign_id: intField(1).optional(),
  date_from: dateField().optional(),
  date_to: dateField().optional(),
  per_page: intField(CALLS_PER_PAGE.min, CALLS_PER_PAGE.max).default(CALLS_PER_PAGE.default),
  page: intField(1).default(1),
});
export type ListCallsQuery = z.output<typeof listCallsQuery>;

/** GET /api/user/leads query (the live service's names, listed in docs/simulator.md; the spec documents none). */
export const listLeadsQuery = z.object({
  status: z.string().optional(),
  campaign_id: intField(1).optional(),
  phone_number: z.string().optional(),
  date_from: dateField().optional(),
  date_to: dateField().optional(),
  per_page: intField(1, 100).optional(),
  page: intField(1).optional(),
});
export type ListLeadsQuery = z.output<typeof listLeadsQuery>;

// ---- Assistants (4.9–4.18) ----

/** Item of `post_call_schema` in an assistant request. */
export const postCallSchemaInput = z.object({
  name: z.string().regex(/^[A-Za-z0-9_]+$/, { error: 'may only contain letters, numbers and underscores' }),
  type: z.enum(POST_CALL_SCHEMA_TYPES),
  description: z.string(),
});

/** Every body field of 4.10 with its rule; none required here. */
export const assistantFields = {
  assistant_name: strField(255),
  voice_id: intField(1),
  language: strField(100),
  llm_model: strField(100),
  calls_direction: z.enum(CALLS_DIRECTIONS),
  engine_type: z.enum(ENGINE_MODES),
  timezone: timezoneField(),
  initial_message: z.string(),
  system_prompt: z.string(),
  phone_number_id: intField(1).nullable(),
  tool_ids: z.array(intField(1)),
  endpoint_type: z.enum(ENDPOINT_TYPES),
  endpoint_sensitivity: numField(0, 5),
  interrupt_sensitivity: numField(0, 5),
  ambient_sound_volume: numField(0, 1),
  post_call_evaluation: boolField(),
  send_webhook_only_on_completed: boolField(),
  include_recording_in_webhook: boolField(),
  is_webhook_active: boolField(),
  webhook_url: urlField().nullable(),
  use_min_interrupt_words: boolField(),
  min_interrupt_words: intField(0, 10),
  variables: objectField(),
  post_call_schema: z.array(postCallSchemaInput),
  end_call_tool: z.object({ description: strField(500).optional() }),
  llm_temperature: numField(0, 1),
  voice_stability: numField(0, 1),
  voice_similarity: numField(0, 1),
  speech_speed: numField(0.7, 1.2),
  allow_interruptions: boolField(),
  filler_audios: boolField(),
  re_engagement_interval: intField(7, 600),
  max_call_duration: intField(20, 1200),
  max_silence_duration: intField(1, 120),
  end_call_on_voicemail: boolField(),
  noise_cancellation: boolField(),
  record_call: boolField(),
  who_speaks_first: z.enum(WHO_SPEAKS_FIRST),
};

const assistantBody = z.object(assistantFields).partial();

const TRUTHY = new Set<unknown>([true, 1, '1', 'true']);

/**
 * `webhook_url` is required when `is_webhook_active` is true (4.9; same on update).
 * Checked even when other fields fail, so every problem is reported at once.
 */
const webhookUrlCheck = (body: unknown): boolean => {
  if (typeof body !== 'object' || body === null) return true;
  const b = body as Record<string, unknown>;
  return !(TRUTHY.has(b['is_webhook_active']) && (b['webhook_url'] === undefined || b['webhook_url'] === null));
};
const webhookUrlRule = {
  path: ['webhook_url'],
  message: 'The webhook url field is required when is webhook active is true.',
  when: () => true,
};

/** POST /api/user/assistant body: `assistant_name` required. */
export const createAssistantRequest = assistantBody
  .extend({ assistant_name: strField(255) })
  .refine(webhookUrlCheck, webhookUrlRule);
export type CreateAssistantRequest = z.output<typeof createAssistantRequest>;

/** PUT /api/user/assistant/{id} body: all optional, same rules. */
export const updateAssistantRequest = assistantBody.refine(webhookUrlCheck, webhookUrlRule);
export type UpdateAssistantRequest = z.output<typeof updateAssistantRequest>;

/** POST /api/user/assistants/enable-inbound-webhook body. */
export const enableInboundWebhookRequest = z.object({ assistant_id: intField(1), webhook_url: urlField() });
export type EnableInboundWebhookRequest = z.output<typeof enableInboundWebhookRequest>;

/** POST /api/user/assistants/disable-inbound-webhook body. */
export const disableInboundWebhookRequest = z.object({ assistant_id: intField(1) });
export type DisableInboundWebhookRequest = z.output<typeof disableInboundWebhookRequest>;

/** POST /api/user/assistants/disable-webhook body. */
export const disableWebhookRequest = z.object({ assistant_id: intField(1) });
export type DisableWebhookRequest = z.output<typeof disableWebhookRequest>;

/** GET /api/user/assistants/get query; fills per_page 10 and page 1. */
export const listAssistantsQuery = z.object({
  per_page: intField(ASSISTANTS_PER_PAGE.min, ASSISTANTS_PER_PAGE.max).default(ASSISTANTS_PER_PAGE.default),
  page: intField(1).default(1),
});
export type ListAssistantsQuery = z.output<typeof listAssistantsQuery>;

/** GET /api/user/assistants/phone-numbers query. */
export const listPhoneNumbersQuery = z.object({ type: z.enum(PHONE_LIST_TYPES).optional() });
export type ListPhoneNumbersQuery = z.output<typeof listPhoneNumbersQuery>;

/** GET /api/user/assistants/voices query. */
export const listVoicesQuery = z.object({ mode: z.enum(ENGINE_MODES).optional() });
export type ListVoicesQuery = z.output<typeof listVoicesQuery>;
