import { CONNECTED_CALL_STATUSES } from '../service/schema/constants.js';
import type { LifecycleDeps } from './lifecycle-deps.js';
import { campaignRecord } from './records.js';
import { plainTime } from './time-format.js';
import type { SimAssistant, SimCall, WebhookDelivery } from './types.js';

/** The post-call payload the live service is reported to send (docs/simulator.md), for a finished call. */
export function postCallPayload(deps: Pick<LifecycleDeps, 'state'>, call: SimCall, assistant: SimAssistant): Record<string, unknown> {
  const { state } = deps;
  const lead = call.leadId === null ? undefined : state.leads.get(call.leadId);
  const campaign = call.campaignId === null ? undefined : state.campaigns.get(call.campaignId);
  const payload: Record<string, unknown> = {
    id: call.id,
    customer_phone: call.client_phone_number,
    assistant_phone: call.assistant_phone_number,
    duration: call.duration,
    status: call.status,
    extracted_variables: call.variables,
    input_variables: call.input_variables,
    transcript: call.transcript,
  };
  if (assistant.fields.include_recording_in_webhook) payload.recording_url = call.recording_url;
  payload.created_at = plainTime(call.createdAt);
  payload.finished_at = call.finishedAt === null ? null : plainTime(call.finishedAt);
  payload.lead = lead
    ? {
        id: lead.id,
        phone_number: lead.phone_number,
        variables: lead.variables,
        status: lead.status,
        created_at: plainTime(lead.createdAt),
        updated_at: plainTime(lead.updatedAt),
      }
    : null;
  payload.campaign = campaign ? campaignRecord(campaign) : null;
  return payload;
}

/**
 * Sends the post-call webhook if the assistant's settings at the end of the call ask
 * for it, and keeps the receiver's answer on the call. Delivery is tracked so tests
 * can await `state.settled()`; it is tried once, like the live service documents.
 */
export function sendPostCallWebhook(deps: LifecycleDeps, call: SimCall, assistant: SimAssistant): void {
  const f = assistant.fields;
  if (!f.is_webhook_active || !f.webhook_url) return;
  if (f.send_webhook_only_on_completed && !(CONNECTED_CALL_STATUSES as readonly string[]).includes(call.status)) return;
  const url = f.webhook_url;
  const payload = postCallPayload(deps, call, assistant);
  const delivery: WebhookDelivery = {
    callId: call.id,
    userIndex: call.userIndex,
    url,
    payload,
    at: deps.clock.now(),
    answeredAt: null,
    status: null,
    response: null,
    error: null,
  };
  deps.state.webhookDeliveries.push(delivery);
  deps.state.track(deliver(deps, delivery, call));
}

async function deliver(deps: LifecycleDeps, delivery: WebhookDelivery, call: SimCall): Promise<void> {
  const abort = new AbortController();
  const cancel = deps.networkClock.setTimer(deps.webhookTimeoutMs, () => abort.abort());
  try {
    const res = await fetch(delivery.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', 'user-agent': 'campaignd-simulator' },
      body: JSON.stringify(delivery.payload),
      redirect: 'manual',
      signal: abort.signal,
    });
    const text = await res.text();
    let body: unknown = text;
    try {
      body = text === '' ? null : JSON.parse(text);
    } catch {
      // Not JSON: keep the text as it came.
    }
    delivery.status = res.status;
    delivery.response = body;
    call.webhook_response = { status: res.status, body };
  } catch (err) {
    const reason = abort.signal.aborted ? 'timeout' : err instanceof Error ? err.message : String(err);
    delivery.error = reason;
    call.webhook_response = { error: reason };
    deps.logger.debug({ callId: call.id, reason }, 'post-call webhook failed');
  } finally {
    delivery.answeredAt = deps.clock.now();
    cancel();
  }
}
