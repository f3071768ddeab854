import { randomUUID } from 'node:crypto';
import type { SimState } from './state.js';
import type { AssistantFields, SimAssistant, SimUser } from './types.js';

// What every user finds on first login: enough records that each list endpoint has
// something to show and each rule something to bite on.

const PUBLIC_VOICES: { name: string; mode: 'pipeline' | 'multimodal' }[] = [
  { name: 'Aria', mode: 'pipeline' },
  { name: 'Brian', mode: 'pipeline' },
  { name: 'Clara', mode: 'pipeline' },
  { name: 'alloy', mode: 'multimodal' },
  { name: 'shimmer', mode: 'multimodal' },
];
const MODELS = ['gpt-4o', 'gpt-4o-mini', 'claude-3-5-sonnet', 'llama-3.1-70b'];

/** Public voices and LLM models, shared by every user. */
export function seedCatalog(state: SimState): void {
  for (const v of PUBLIC_VOICES) {
    const id = state.nextId('voice');
    state.voices.set(id, { id, name: v.name, mode: v.mode, ownerId: null });
  }
  for (const name of MODELS) {
    const id = state.nextId('model');
    state.models.set(id, { id, name });
  }
}

/** Default fields of a new assistant (the spec leaves defaults "not shown"; see docs/simulator.md). */
export function defaultAssistantFields(
  state: SimState,
  name: string,
  type: 'inbound' | 'outbound',
): AssistantFields {
  const firstModel = [...state.models.values()][0];
  const firstVoice = [...state.voices.values()].find((v) => v.ownerId === null && v.mode === 'pipeline');
  return {
    phone_number_id: null,
    engine_id: 1,
    synthesizer_id: 1,
    transcriber_id: 1,
    voice_id: firstVoice?.id ?? 1,
    instance_id: 1,
    name,
    variables: {},
    post_call_evaluation: false,
    fillers: 0,
    post_call_schema: [],
    is_webhook_active: false,
    webhook_url: null,
    inbound_webhook_url: null,
    language: 'English',
    type,
    status: 'active',
    max_duration: 600,
    record: true,
    initial_message: 'Hello, this is your assistant speaking.',
    system_prompt: 'You are a helpful assistant.',
    flows_platform_id: null,
    timezone: 'UTC',
    max_silence_duration: 30,
    reengagement_interval: 30,
    deleted_at: null,
    end_call_on_voicemail: 1,
    llm_temperature: '0.7',
    voice_stability: '0.5',
    voice_similarity: '0.75',
    allow_interruptions: true,
    enable_noise_cancellation: false,
    endpoint_sensitivity: 0.5,
    speech_speed: '1',
    endpoint_type: 'vad',
    wait_for_customer: false,
    mode: 'pipeline',
    language_id: 1,
    transcriber_provider_id: 1,
    synthesizer_provider_id: 1,
    llm_model_id: firstModel?.id ?? 1,
    multimodal_model_id: null,
    ambient_sound: 'none',
    uuid: randomUUID(),
    send_webhook_only_on_completed: false,
    include_recording_in_webhook: false,
    interrupt_sensitivity: 0.5,
    filler_config: { neutral: [], negative: [], positive: [], question: [] },
    knowledgebase_id: 0,
    knowledgebase_mode: 'none',
    min_interrupt_words: 0,
    use_min_interrupt_words: false,
    ambient_sound_volume: '0.5',
    widget_settings: {},
    end_call_tool: { description: '' },
  };
}

/** Stores a new assistant for a user and returns it. */
export function addAssistant(state: SimState, userId: number, fields: AssistantFields, now: number): SimAssistant {
  const id = state.nextId('assistant');
  const rec: SimAssistant = { id, userId, toolIds: [], createdAt: now, updatedAt: now, fields };
  state.assistants.set(id, rec);
  return rec;
}

/** Adds a user for `token` with its starting records. */
export function seedUser(state: SimState, token: string, now: number): SimUser {
  const index = state.users.length;
  const user: SimUser = { index, id: 1000 + index, token, tokenValid: true };
  state.users.push(user);

  // Numbers differ per user so that calls of two users never share an assistant number.
  const base = 14155550100 + index * 10;
  const numbers: { label: 'Normal' | 'SIP' | 'Caller ID'; n: number }[] = [
    { label: 'Normal', n: base },
    { label: 'Normal', n: base + 1 },
    { label: 'SIP', n: base + 2 },
    { label: 'Caller ID', n: base + 3 },
    { label: 'Normal', n: base + 4 },
  ];
  const ids: number[] = [];
  for (const { label, n } of numbers) {
    const id = state.nextId('phone');
    ids.push(id);
    state.phoneNumbers.set(id, { id, userId: user.id, phone_number: `+${n}`, country_code: 'US', type_label: label });
  }

  const voiceId = state.nextId('voice');
  state.voices.set(voiceId, { id: voiceId, name: `My cloned voice ${index + 1}`, mode: 'pipeline', ownerId: user.id });

  const outbound = defaultAssistantFields(state, 'Outbound Sales', 'outbound');
  outbound.phone_number_id = ids[0] ?? null;
  outbound.timezone = 'America/New_York';
  outbound.initial_message = 'Hi {{name}}, this is Ava calling about your renewal.';
  addAssistant(state, user.id, outbound, now);

  const inbound = defaultAssistantFields(state, 'Reception', 'inbound');
  inbound.phone_number_id = ids[1] ?? null;
  inbound.timezone = 'Europe/Berlin';
  addAssistant(state, user.id, inbound, now);

  const campaignId = state.nextId('campaign');
  state.campaigns.set(campaignId, {
    id: campaignId,
    userId: user.id,
    name: 'Default campaign',
    status: 'draft',
    max_calls_in_parallel: 3,
    mark_complete_when_no_leads: true,
    allowed_hours_start_time: '00:00:00',
    allowed_hours_end_time: '23:59:00',
    allowed_days: ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'],
    max_retries: 3,
    retry_interval: 60,
    createdAt: now,
    updatedAt: now,
  });
  return user;
}
