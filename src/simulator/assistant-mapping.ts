import type { UpdateAssistantRequest } from '../service/schema/requests.js';
import type { SimState } from './state.js';
import type { AssistantFields, SimAssistant } from './types.js';

// Request field names of spec 4.10 → record field names of spec 2.4. The spec leaves
// this mapping "not shown"; docs/simulator.md lists it.

/** Checks references (voice, phone number, tools) against what the user may use. */
export function referenceErrors(state: SimState, userId: number, d: UpdateAssistantRequest): Record<string, string[]> {
  const errors: Record<string, string[]> = {};
  if (d.voice_id !== undefined && !state.voicesFor(userId).some((v) => v.id === d.voice_id)) {
    errors.voice_id = ['The selected voice id is invalid.'];
  }
  if (d.phone_number_id !== undefined && d.phone_number_id !== null && !state.owned(state.phoneNumbers, d.phone_number_id, userId)) {
    errors.phone_number_id = ['The selected phone number id is invalid.'];
  }
  d.tool_ids?.forEach((id, i) => {
    if (!state.owned(state.tools, id, userId)) errors[`tool_ids.${i}`] = [`The selected tool_ids.${i} is invalid.`];
  });
  return errors;
}

/** Applies a validated create/update body to an assistant (only supplied fields). */
export function applyAssistantRequest(state: SimState, a: SimAssistant, d: UpdateAssistantRequest): void {
  const f: AssistantFields = a.fields;
  if (d.assistant_name !== undefined) f.name = d.assistant_name;
  if (d.voice_id !== undefined) f.voice_id = d.voice_id;
  if (d.language !== undefined) f.language = d.language;
  if (d.llm_model !== undefined) {
    // Unknown names are kept out of llm_model_id rather than refused: the spec states
    // no existence rule for llm_model.
    const model = [...state.models.values()].find((m) => m.name === d.llm_model);
    if (model) f.llm_model_id = model.id;
  }
  if (d.calls_direction !== undefined) f.type = d.calls_direction === 'make' ? 'outbound' : 'inbound';
  if (d.engine_type !== undefined) f.mode = d.engine_type;
  if (d.timezone !== undefined) f.timezone = d.timezone;
  if (d.initial_message !== undefined) f.initial_message = d.initial_message;
  if (d.system_prompt !== undefined) f.system_prompt = d.system_prompt;
  if (d.phone_number_id !== undefined) f.phone_number_id = d.phone_number_id;
  if (d.tool_ids !== undefined) a.toolIds = [...new Set(d.tool_ids)];
  if (d.endpoint_type !== undefined) f.endpoint_type = d.endpoint_type;
  if (d.endpoint_sensitivity !== undefined) f.endpoint_sensitivity = d.endpoint_sensitivity;
  if (d.interrupt_sensitivity !== undefined) f.interrupt_sensitivity = d.interrupt_sensitivity;
  if (d.ambient_sound_volume !== undefined) f.ambient_sound_volume = String(d.ambient_sound_volume);
  if (d.post_call_evaluation !== undefined) f.post_call_evaluation = d.post_call_evaluation;
  if (d.send_webhook_only_on_completed !== undefined) f.send_webhook_only_on_completed = d.send_webhook_only_on_completed;
  if (d.include_recording_in_webhook !== undefined) f.include_recording_in_webhook = d.include_recording_in_webhook;
  if (d.use_min_interrupt_words !== undefined) f.use_min_interrupt_words = d.use_min_interrupt_words;
  if (d.min_interrupt_words !== undefined) f.min_interrupt_words = d.min_interrupt_words;
  if (d.variables !== undefined) f.variables = d.variables;
  if (d.post_call_schema !== undefined) f.post_call_schema = d.post_call_schema;
  if (d.end_call_tool?.description !== undefined) f.end_call_tool = { description: d.end_call_tool.description };
  if (d.llm_temperature !== undefined) f.llm_temperature = String(d.llm_temperature);
  if (d.voice_stability !== undefined) f.voice_stability = String(d.voice_stability);
  if (d.voice_similarity !== undefined) f.voice_similarity = String(d.voice_similarity);
  if (d.speech_speed !== undefined) f.speech_speed = String(d.speech_speed);
  if (d.allow_interruptions !== undefined) f.allow_interruptions = d.allow_interruptions;
  if (d.filler_audios !== undefined) f.fillers = d.filler_audios ? 1 : 0;
  if (d.re_engagement_interval !== undefined) f.reengagement_interval = d.re_engagement_interval;
  if (d.max_call_duration !== undefined) f.max_duration = d.max_call_duration;
  if (d.max_silence_duration !== undefined) f.max_silence_duration = d.max_silence_duration;
  if (d.end_call_on_voicemail !== undefined) f.end_call_on_voicemail = d.end_call_on_voicemail ? 1 : 0;
  if (d.noise_cancellation !== undefined) f.enable_noise_cancellation = d.noise_cancellation;
  if (d.record_call !== undefined) f.record = d.record_call;
  if (d.who_speaks_first !== undefined) f.wait_for_customer = d.who_speaks_first === 'Customer';
  applyWebhookSettings(f, d);
}

/**
 * The webhook moves of spec section 3: `webhook_url: null` or `is_webhook_active: false`
 * disables the post-call webhook; a URL with `is_webhook_active: true` enables it.
 */
function applyWebhookSettings(f: AssistantFields, d: UpdateAssistantRequest): void {
  if (d.webhook_url === null) {
    f.webhook_url = null;
    f.is_webhook_active = false;
  } else if (d.webhook_url !== undefined) {
    f.webhook_url = d.webhook_url;
  }
  if (d.is_webhook_active === false) f.is_webhook_active = false;
  if (d.is_webhook_active === true && f.webhook_url !== null) f.is_webhook_active = true;
}
