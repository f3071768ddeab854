import { z } from 'zod';
import {
  liberalArray,
  liberalBoolean,
  liberalId,
  liberalNumber,
  liberalObject,
  liberalTranscript,
  nullableBoolean,
  nullableNumber,
  nullableString,
  optionalId,
} from './liberal.js';

/**
 * Parsing schemas for every record of spec section 2 and the post-call webhook payload
 * the live service sends (its fields: docs/simulator.md). They are liberal on purpose: ids as numbers or numeric strings,
 * `variables` as `{}` or `[]`, transcripts as strings or arrays, costs as numbers or
 * numeric strings; unknown fields pass through and absent optional fields become null.
 * Timestamps stay strings here; turn them into instants with `parseServiceTime`.
 */

export * from './constants.js';
export { parseServiceTime } from './service-time.js';
export { liberalId, liberalNumber, liberalObject, liberalTranscript, liberalBoolean } from './liberal.js';

/** Mid call tool `headers` item. */
export const toolHeaderSchema = z.looseObject({ name: z.string(), value: z.string() });
/** Mid call tool `schema` item (parameter the AI extracts). */
export const toolParameterSchema = z.looseObject({ name: z.string(), type: z.string(), description: z.string() });

/** Mid call tool (spec 2.1). */
export const toolSchema = z.looseObject({
  id: liberalId,
  name: z.string(),
  description: nullableString,
  endpoint: nullableString,
  method: nullableString,
  timeout: nullableNumber,
  headers: liberalArray(toolHeaderSchema),
  schema: liberalArray(toolParameterSchema),
  created_at: nullableString,
  updated_at: nullableString,
});
export type Tool = z.output<typeof toolSchema>;

/** Secondary contact of a lead (spec 2.2). */
export const secondaryContactSchema = z.looseObject({
  id: liberalId,
  phone_number: z.string(),
  variables: liberalObject,
  status: nullableString,
  created_at: nullableString,
  updated_at: nullableString,
});
export type SecondaryContact = z.output<typeof secondaryContactSchema>;

/** Lead (spec 2.2). */
export const leadSchema = z.looseObject({
  id: liberalId,
  campaign_id: optionalId,
  phone_number: z.string(),
  variables: liberalObject,
  status: nullableString,
  created_at: nullableString,
  updated_at: nullableString,
  campaign: z.looseObject({ id: liberalId, name: nullableString }).nullish().transform((v) => v ?? null),
  secondary_contacts: liberalArray(secondaryContactSchema),
});
export type Lead = z.output<typeof leadSchema>;

/** Campaign (spec 2.3). */
export const campaignSchema = z.looseObject({
  id: liberalId,
  name: z.string(),
  status: nullableString,
  max_calls_in_parallel: nullableNumber,
  mark_complete_when_no_leads: nullableBoolean,
  allowed_hours_start_time: nullableString,
  allowed_hours_end_time: nullableString,
  allowed_days: liberalArray(z.string()),
  max_retries: nullableNumber,
  retry_interval: nullableNumber,
  created_at: nullableString,
  updated_at: nullableString,
});
export type Campaign = z.output<typeof campaignSchema>;

/** Item of an assistant's `post_call_schema`. */
export const postCallSchemaItemSchema = z.looseObject({
  name: z.string(),
  type: z.string(),
  description: nullableString,
});

/** Assistant, full record as returned by the paginated list (spec 2.4). */
export const assistantSchema = z.looseObject({
  id: liberalId,
  user_id: optionalId,
  phone_number_id: optionalId,
  engine_id: optionalId,
  synthesizer_id: optionalId,
  transcriber_id: optionalId,
  voice_id: optionalId,
  instance_id: optionalId,
  name: z.string(),
  variables: liberalObject,
  post_call_evaluation: nullableBoolean,
  fillers: nullableNumber,
  post_call_schema: liberalArray(postCallSchemaItemSchema),
  tools: liberalArray(z.unknown()),
  is_webhook_active: nullableBoolean,
  webhook_url: nullableString,
  inbound_webhook_url: nullableString,
  language: nullableString,
  type: nullableString,
  status: nullableString,
  max_duration: nullableNumber,
  record: nullableBoolean,
  initial_message: nullableString,
  system_prompt: nullableString,
  flows_platform_id: optionalId,
  timezone: nullableString,
  created_at: nullableString,
  updated_at: nullableString,
  max_silence_duration: nullableNumber,
  reengagement_interval: nullableNumber,
  deleted_at: nullableString,
  end_call_on_voicemail: nullableNumber,
  llm_temperature: nullableNumber,
  voice_stability: nullableNumber,
  voice_similarity: nullableNumber,
  allow_interruptions: nullableBoolean,
  enable_noise_cancellation: nullableBoolean,
  endpoint_sensitivity: nullableNumber,
  speech_speed: nullableNumber,
  endpoint_type: nullableString,
  wait_for_customer: nullableBoolean,
  mode: nullableString,
  language_id: optionalId,
  transcriber_provider_id: optionalId,
  synthesizer_provider_id: optionalId,
  llm_model_id: optionalId,
  multimodal_model_id: optionalId,
  ambient_sound: nullableString,
  uuid: nullableString,
  send_webhook_only_on_completed: nullableBoolean,
  include_recording_in_webhook: nullableBoolean,
  interrupt_sensitivity: nullableNumber,
  filler_config: liberalObject,
  knowledgebase_id: optionalId,
  knowledgebase_mode: nullableString,
  min_interrupt_words: nullableNumber,
  ambient_sound_volume: nullableNumber,
  widget_settings: liberalObject,
});
export type Assistant = z.output<typeof assistantSchema>;

/** Outbound assistant summary (spec 2.5). */
export const outboundAssistantSchema = z.looseObject({
  id: liberalId,
  user_id: optionalId,
  name: z.string(),
  type: nullableString,
  mode: nullableString,
  status: nullableString,
  voice_id: optionalId,
  language_id: optionalId,
  timezone: nullableString,
  initial_message: nullableString,
  system_prompt: nullableString,
  variables: liberalObject,
  webhook_url: nullableString,
  is_webhook_active: nullableBoolean,
  created_at: nullableString,
  updated_at: nullableString,
});
export type OutboundAssistant = z.output<typeof outboundAssistantSchema>;

/**
 * The result fields of a call or webhook as the service sent them, under `given`, before
 * the liberal parsing below joins a transcript list into text or drops a value of the
 * wrong type: the store keeps them as sent (src/results/given.ts judges each one).
 */
function keepGiven(keys: readonly string[]) {
  return (v: unknown): unknown => {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
    const r = v as Record<string, unknown>;
    return { ...r, given: Object.fromEntries(keys.map((k) => [k, r[k]])) };
  };
}
const givenSchema = z.record(z.string(), z.unknown());

/**
 * Call (spec 2.6). `status` stays a plain string so an unknown value never breaks polling;
 * a result field of the wrong type reads as empty (and is judged from `given`), so it
 * never hides the call's end either.
 */
export const callSchema = z.preprocess(keepGiven(['transcript', 'variables', 'evaluation', 'recording_url']), z.looseObject({
  id: liberalId,
  assistant_name: nullableString,
  campaign_name: nullableString,
  type: nullableString,
  duration: nullableNumber,
  assistant_phone_number: nullableString,
  client_phone_number: nullableString,
  status: z.string(),
  transcript: liberalTranscript.catch(''),
  variables: liberalObject.catch({}),
  evaluation: liberalObject.catch({}),
  webhook_response: z.unknown().optional().transform((v) => (v === undefined ? null : v)),
  carrier_cost: nullableNumber,
  total_cost: nullableNumber,
  answered_by: nullableString,
  recording_url: nullableString.catch(null),
  created_at: nullableString,
  updated_at: nullableString,
  given: givenSchema.optional(),
}));
export type Call = z.output<typeof callSchema>;

/** Phone number entry (spec 2.7). */
export const phoneNumberSchema = z.looseObject({
  id: liberalId,
  phone_number: z.string(),
  country_code: nullableString,
  type_label: nullableString,
  is_available: nullableBoolean,
});
export type PhoneNumber = z.output<typeof phoneNumberSchema>;

/** Voice entry (spec 2.8). */
export const voiceSchema = z.looseObject({ id: liberalId, name: z.string(), mode: nullableString });
export type Voice = z.output<typeof voiceSchema>;

/** LLM model entry (spec 2.8). */
export const llmModelSchema = z.looseObject({ id: liberalId, name: z.string() });
export type LlmModel = z.output<typeof llmModelSchema>;

/** Link of a pagination envelope. */
export const pageLinkSchema = z.looseObject({ url: nullableString, label: z.string(), active: liberalBoolean });

/** Pagination envelope (spec 2.9) around records parsed by `item`. */
export function paginated<T extends z.ZodType>(item: T) {
  return z.looseObject({
    current_page: liberalNumber,
    data: z.array(item),
    first_page_url: nullableString,
    from: nullableNumber,
    last_page: nullableNumber,
    last_page_url: nullableString,
    links: liberalArray(pageLinkSchema),
    next_page_url: nullableString,
    path: nullableString,
    per_page: nullableNumber,
    prev_page_url: nullableString,
    to: nullableNumber,
    total: nullableNumber,
  });
}
/** A parsed pagination envelope of records of type T. */
export interface Page<T> {
  current_page: number;
  data: T[];
  next_page_url: string | null;
  last_page: number | null;
  per_page: number | null;
  total: number | null;
  [key: string]: unknown;
}

/** Lead attached to a post-call webhook payload. */
export const webhookLeadSchema = z.looseObject({
  id: liberalId,
  phone_number: nullableString,
  variables: liberalObject,
  status: nullableString,
  created_at: nullableString,
  updated_at: nullableString,
});

/** Post-call webhook payload, as the live service is reported to send it (docs/simulator.md). */
export const postCallWebhookSchema = z.preprocess(keepGiven(['transcript', 'extracted_variables', 'recording_url', 'evaluation', 'answered_by']), z.looseObject({
  id: liberalId,
  customer_phone: nullableString,
  assistant_phone: nullableString,
  duration: nullableNumber,
  status: z.string(),
  // Result fields: a value of the wrong type must not refuse the call's outcome.
  extracted_variables: liberalObject.catch({}),
  input_variables: liberalObject.catch({}),
  transcript: liberalTranscript.catch(''),
  recording_url: nullableString.catch(null),
  created_at: nullableString,
  finished_at: nullableString,
  lead: webhookLeadSchema.nullish().transform((v) => v ?? null),
  campaign: z.looseObject({}).nullish().transform((v) => v ?? null),
  given: givenSchema.optional(),
}));
export type PostCallWebhook = z.output<typeof postCallWebhookSchema>;

/** `data` of the create/update assistant answers (4.9, 4.10). */
export const assistantSummarySchema = z.looseObject({
  id: liberalId,
  name: nullableString,
  status: nullableString,
  type: nullableString,
  mode: nullableString,
});
export type AssistantSummary = z.output<typeof assistantSummarySchema>;

/** `data` of the update-status answer (4.6). */
export const campaignStatusResultSchema = z.looseObject({
  campaign_id: optionalId,
  status: nullableString,
});
