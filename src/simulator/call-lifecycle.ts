import { drawPlan } from './call-plan.js';
import { playConversation, type Conversation } from './conversations.js';
import type { LifecycleDeps } from './lifecycle-deps.js';
import type { SimState } from './state.js';
import type { FixedOutcome, SimAssistant, SimCall, SimLead, SimUser } from './types.js';
import { sendPostCallWebhook } from './webhook-sender.js';

const DIAL_SECONDS = 1;

/**
 * Creates an outbound call in `initiated` and schedules its moves on the clock:
 * ringing after a second, then either in-progress and a final status after the talk
 * time, or straight to busy / no-answer / failed after ringing.
 */
export function placeCall(
  deps: LifecycleDeps,
  user: SimUser,
  assistant: SimAssistant,
  phoneNumber: string,
  inputVariables: Record<string, unknown>,
): SimCall {
  const { state, clock } = deps;
  const now = clock.now();
  const nth = state.callsPerNumber.get(phoneNumber) ?? 0;
  state.callsPerNumber.set(phoneNumber, nth + 1);
  const plan = drawPlan(deps.plan, phoneNumber, nth, assistant.fields.max_duration, takeFixed(state, phoneNumber));
  const conversation = converse(deps, phoneNumber, nth, assistant, now, plan);
  const lead = findLead(state, user.id, phoneNumber);
  const id = state.nextId('call', 480_001);
  const call: SimCall = {
    id,
    userId: user.id,
    userIndex: user.index,
    assistantId: assistant.id,
    campaignId: lead?.campaignId ?? null,
    leadId: lead?.id ?? null,
    type: 'outbound',
    client_phone_number: phoneNumber,
    assistant_phone_number: assistantNumber(state, assistant),
    status: 'initiated',
    answered_by: null,
    duration: 0,
    transcript: '',
    variables: {},
    input_variables: inputVariables,
    evaluation: {},
    webhook_response: {},
    carrier_cost: 0,
    total_cost: 0,
    recording_url: null,
    createdAt: now,
    updatedAt: now,
    finishedAt: null,
    plan,
    conversation,
    timeline: [{ status: 'initiated', at: now }],
  };
  state.calls.set(id, call);

  state.schedule(clock, DIAL_SECONDS * 1000, () => {
    move(call, 'ringing', clock.now());
    if (plan.talkSeconds > 0) {
      state.schedule(clock, plan.ringSeconds * 1000, () => {
        move(call, 'in-progress', clock.now());
        call.answered_by = plan.answeredBy;
        // A call fixed to stay in progress never ends (for "stuck call" tests).
        if (Number.isFinite(plan.talkSeconds)) {
          state.schedule(clock, plan.talkSeconds * 1000, () => finish(deps, call, assistant));
        }
      });
    } else {
      state.schedule(clock, plan.ringSeconds * 1000, () => finish(deps, call, assistant));
    }
  });
  return call;
}

function move(call: SimCall, status: string, at: number): void {
  call.status = status;
  call.updatedAt = at;
  call.timeline.push({ status, at });
}

/** Puts the call in its final status, fills in its data and sends the webhook. */
function finish(deps: LifecycleDeps, call: SimCall, assistant: SimAssistant): void {
  const now = deps.clock.now();
  const { plan } = call;
  const connected = plan.talkSeconds > 0;
  move(call, plan.finalStatus, now);
  call.finishedAt = now;
  call.answered_by = plan.answeredBy;
  call.duration = connected ? Math.round((now - (call.timeline.find((t) => t.status === 'in-progress')?.at ?? now)) / 1000) : 0;
  const minutes = Math.max(1, Math.ceil(call.duration / 60));
  call.carrier_cost = connected ? round(minutes * 0.014) : 0;
  call.total_cost = connected ? round(call.carrier_cost + minutes * 0.08) : 0;
  const f = assistant.fields;
  const greeting = fillVariables(f.initial_message, { ...f.variables, ...call.input_variables });
  if (connected && plan.answeredBy === 'human' && call.conversation) {
    call.transcript = [`AI: ${greeting}`, ...call.conversation.lines.map((l) => `user: ${l}`), 'AI: Thank you for your time.'].join('\n');
    call.variables = { ...extractVariables(f.post_call_schema), ...call.conversation.variables };
    if (f.post_call_evaluation) call.evaluation = { successful: plan.finalStatus !== 'ended_by_customer', summary: 'The customer was reached.' };
  } else if (connected && plan.answeredBy === 'human') {
    call.transcript = `AI: ${greeting}\nuser: Hi, yes, speaking.\nAI: Thank you for your time.\nuser: Bye.`;
    call.variables = extractVariables(f.post_call_schema);
    if (f.post_call_evaluation) call.evaluation = { successful: plan.finalStatus !== 'ended_by_customer', summary: 'The customer was reached.' };
  } else if (connected) {
    call.transcript = `AI: ${greeting}\nuser: [voicemail greeting]`;
  }
  // Set per number by the tests (`POST /__sim/extracted`): what the assistant heard, answered by a person or not.
  const heard = connected ? takeExtracted(deps.state, call.client_phone_number) : undefined;
  if (heard) call.variables = { ...call.variables, ...heard };
  if (connected && f.record) call.recording_url = `${deps.origin()}/recordings/${call.id}.mp3`;
  sendPostCallWebhook(deps, call, assistant);
}

/** Replaces `{{name}}` placeholders with the call's variables (unknown ones stay as written). */
function fillVariables(text: string, vars: Record<string, unknown>): string {
  return text.replace(/\{\{\s*([\w.-]+)\s*\}\}/g, (whole, key: string) => {
    const v = vars[key];
    return v === undefined || v === null ? whole : String(v);
  });
}

function round(n: number): number {
  return Math.round(n * 10_000) / 10_000;
}

function extractVariables(schema: { name: string; type: string }[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const item of schema) out[item.name] = item.type === 'number' ? 1 : item.type === 'bool' ? true : 'yes';
  return out;
}

/**
 * The conversation of a call a person will answer, if the number or the simulator has a
 * scenario. A drawn (not fixed) outcome takes its talk time, and so its cost, from the
 * conversation; a test that fixed the duration keeps it.
 */
function converse(deps: LifecycleDeps, phoneNumber: string, nth: number, assistant: SimAssistant, now: number, plan: SimCall['plan']): Conversation | null {
  if (plan.answeredBy !== 'human' || !(plan.talkSeconds > 0) || !Number.isFinite(plan.talkSeconds)) return null;
  const conversation = playConversation(deps.conversations, phoneNumber, nth, deps.state.conversationByNumber.get(phoneNumber), now, assistant.fields.max_duration);
  if (conversation && plan.outcome === 'human') plan.talkSeconds = conversation.talkSeconds;
  return conversation;
}

/** The variables set for the number's connected calls, counting this call against a `count`. */
function takeExtracted(state: SimState, phoneNumber: string): Record<string, unknown> | undefined {
  const set = state.extractedByNumber.get(phoneNumber);
  if (!set) return undefined;
  set.remaining -= 1;
  if (set.remaining <= 0) state.extractedByNumber.delete(phoneNumber);
  return set.variables;
}

function takeFixed(state: SimState, phoneNumber: string): FixedOutcome | undefined {
  const list = state.fixedOutcomes.get(phoneNumber);
  const head = list?.[0];
  if (!list || !head) return undefined;
  if (Number.isFinite(head.remaining)) {
    head.remaining -= 1;
    if (head.remaining <= 0) list.shift();
  }
  return head;
}

/** The newest lead (or secondary contact) of the user with this number, if any. */
function findLead(state: SimState, userId: number, phoneNumber: string): SimLead | undefined {
  let best: SimLead | undefined;
  for (const lead of state.leads.values()) {
    if (lead.userId === userId && lead.phone_number === phoneNumber && (!best || lead.id > best.id)) best = lead;
  }
  return best;
}

/** The number the assistant calls from: its own, else the user's first Normal number. */
function assistantNumber(state: SimState, assistant: SimAssistant): string {
  const own = assistant.fields.phone_number_id;
  const rec = own === null ? undefined : state.phoneNumbers.get(own);
  if (rec) return rec.phone_number;
  const first = state.allOf(state.phoneNumbers, assistant.userId).find((p) => p.type_label === 'Normal');
  return first?.phone_number ?? '+10000000000';
}
