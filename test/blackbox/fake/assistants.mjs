// The fake account's assistants: one outbound assistant that places the calls and one
// inbound assistant (so the list is not just the one the client looks for). Ids are
// numeric STRINGS, as some deployments are reported to send them.
import { isoMicro } from './server-time.mjs';

/** The two assistants; `outboundId` is the id campaigns must name. */
export function createAssistants({ outboundId, timezone }) {
  const created = Date.now() - 86_400_000;
  const base = (id, name, type, phone) => ({
    id: String(id),
    user_id: '9001',
    phone_number_id: type === 'inbound' ? '77' : null,
    engine_id: null,
    synthesizer_id: null,
    transcriber_id: null,
    voice_id: '3',
    instance_id: '1',
    name,
    variables: [],
    post_call_evaluation: false,
    fillers: 1,
    post_call_schema: [],
    tools: [],
    is_webhook_active: false,
    webhook_url: null,
    inbound_webhook_url: null,
    language: 'English (US)',
    type,
    status: 'active',
    max_duration: 900,
    record: false,
    initial_message: 'Hello, this is your assistant calling.',
    system_prompt: 'You are a polite assistant.',
    flows_platform_id: null,
    timezone,
    created_at: isoMicro(created),
    updated_at: isoMicro(created),
    max_silence_duration: 25,
    reengagement_interval: 45,
    deleted_at: null,
    end_call_on_voicemail: 0,
    llm_temperature: '0.40',
    voice_stability: '0.65',
    voice_similarity: '0.80',
    allow_interruptions: false,
    enable_noise_cancellation: true,
    endpoint_sensitivity: 2.5,
    speech_speed: '1.0',
    endpoint_type: 'vad',
    wait_for_customer: false,
    mode: 'pipeline',
    language_id: '1',
    transcriber_provider_id: null,
    synthesizer_provider_id: null,
    llm_model_id: '5',
    multimodal_model_id: null,
    ambient_sound: 'none',
    uuid: `0b7c2f3e-5d1a-4c8e-9f00-${String(id).padStart(12, '0')}`,
    send_webhook_only_on_completed: false,
    include_recording_in_webhook: false,
    interrupt_sensitivity: 2,
    filler_config: { neutral: [], negative: [], positive: [], question: [] },
    knowledgebase_id: '0',
    knowledgebase_mode: 'none',
    min_interrupt_words: 0,
    ambient_sound_volume: '0.2',
    widget_settings: [],
    // Not a record field: the number the assistant calls from.
    phone,
  });
  const list = [base(Number(outboundId) - 1, 'Front desk (inbound)', 'inbound', '+15550001000'), base(outboundId, 'Campaign caller', 'outbound', '+15550001001')];
  return {
    list,
    /** The assistant with this id (number or numeric string), or undefined. */
    byId: (id) => list.find((a) => a.id === String(id).trim()),
  };
}

/** The record of 2.4 (without the internal `phone`). */
export function fullRecord(a) {
  const { phone: _phone, ...rest } = a;
  return rest;
}

/** The outbound summary of 2.5. */
export function outboundSummary(a) {
  const keys = ['id', 'user_id', 'name', 'type', 'mode', 'status', 'voice_id', 'language_id', 'timezone', 'initial_message', 'system_prompt', 'variables', 'webhook_url', 'is_webhook_active', 'created_at', 'updated_at'];
  return Object.fromEntries(keys.map((k) => [k, a[k]]));
}

/**
 * Applies an update (4.10) to the webhook fields and the few others the tests touch;
 * returns field errors ({field: [message]}) or null. Webhook moves follow spec section 3:
 * webhook_url null or is_webhook_active false disables it.
 */
export function applyUpdate(a, body) {
  const errors = {};
  if ('webhook_url' in body && body.webhook_url !== null && !isUrl(body.webhook_url)) errors.webhook_url = ['The webhook url field must be a valid URL.'];
  if ('is_webhook_active' in body && typeof body.is_webhook_active !== 'boolean') errors.is_webhook_active = ['The is webhook active field must be true or false.'];
  const url = 'webhook_url' in body ? body.webhook_url : a.webhook_url;
  if (body.is_webhook_active === true && !url) errors.webhook_url = ['The webhook url field is required when is webhook active is true.'];
  if ('assistant_name' in body && (typeof body.assistant_name !== 'string' || body.assistant_name.length > 255)) errors.assistant_name = ['The assistant name must be a string of at most 255 characters.'];
  if ('max_call_duration' in body && !(Number.isInteger(body.max_call_duration) && body.max_call_duration >= 20 && body.max_call_duration <= 1200)) errors.max_call_duration = ['The max call duration must be between 20 and 1200.'];
  if (Object.keys(errors).length > 0) return errors;
  if ('webhook_url' in body) {
    a.webhook_url = body.webhook_url;
    if (body.webhook_url === null) a.is_webhook_active = false;
  }
  if ('is_webhook_active' in body) a.is_webhook_active = body.is_webhook_active;
  if ('assistant_name' in body) a.name = body.assistant_name;
  if ('max_call_duration' in body) a.max_duration = body.max_call_duration;
  a.updated_at = isoMicro(Date.now());
  return null;
}

function isUrl(text) {
  try {
    const u = new URL(text);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}
