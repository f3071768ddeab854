import type { SimState } from './state.js';
import { isoMicros, plainTime } from './time-format.js';
import type { SimAssistant, SimCall, SimCampaign, SimLead, SimPhoneNumber, SimTool } from './types.js';

// Shaping internal records into the records of spec section 2.

/** Tool record (2.1). */
export function toolRecord(t: SimTool): Record<string, unknown> {
  return {
    id: t.id,
    name: t.name,
    description: t.description,
    endpoint: t.endpoint,
    method: t.method,
    timeout: t.timeout,
    headers: t.headers,
    schema: t.schema,
    created_at: isoMicros(t.createdAt),
    updated_at: isoMicros(t.updatedAt),
  };
}

/** Campaign record (2.3). */
export function campaignRecord(c: SimCampaign): Record<string, unknown> {
  return {
    id: c.id,
    name: c.name,
    status: c.status,
    max_calls_in_parallel: c.max_calls_in_parallel,
    mark_complete_when_no_leads: c.mark_complete_when_no_leads,
    allowed_hours_start_time: c.allowed_hours_start_time,
    allowed_hours_end_time: c.allowed_hours_end_time,
    allowed_days: c.allowed_days,
    max_retries: c.max_retries,
    retry_interval: c.retry_interval,
    created_at: isoMicros(c.createdAt),
    updated_at: isoMicros(c.updatedAt),
  };
}

/** Secondary contact (2.2). */
export function secondaryRecord(l: SimLead): Record<string, unknown> {
  return {
    id: l.id,
    phone_number: l.phone_number,
    variables: l.variables,
    status: l.status,
    created_at: plainTime(l.createdAt),
    updated_at: plainTime(l.updatedAt),
  };
}

/** Lead record (2.2) with its campaign and secondary contacts. */
export function leadRecord(state: SimState, l: SimLead): Record<string, unknown> {
  const campaign = state.campaigns.get(l.campaignId);
  return {
    id: l.id,
    campaign_id: l.campaignId,
    phone_number: l.phone_number,
    variables: l.variables,
    status: l.status,
    created_at: plainTime(l.createdAt),
    updated_at: plainTime(l.updatedAt),
    campaign: { id: l.campaignId, name: campaign?.name ?? '' },
    secondary_contacts: l.secondaryIds
      .map((id) => state.leads.get(id))
      .filter((s): s is SimLead => s !== undefined)
      .map(secondaryRecord),
  };
}

/** Full assistant record (2.4); `tools` holds the attached tool records. */
export function assistantRecord(state: SimState, a: SimAssistant): Record<string, unknown> {
  const { end_call_tool: _endCallTool, use_min_interrupt_words: _useMin, ...fields } = a.fields;
  return {
    id: a.id,
    user_id: a.userId,
    ...fields,
    tools: a.toolIds
      .map((id) => state.tools.get(id))
      .filter((t): t is SimTool => t !== undefined)
      .map(toolRecord),
    created_at: isoMicros(a.createdAt),
    updated_at: isoMicros(a.updatedAt),
  };
}

/** Outbound assistant summary (2.5). */
export function outboundSummary(a: SimAssistant): Record<string, unknown> {
  const f = a.fields;
  return {
    id: a.id,
    user_id: a.userId,
    name: f.name,
    type: f.type,
    mode: f.mode,
    status: f.status,
    voice_id: f.voice_id,
    language_id: f.language_id,
    timezone: f.timezone,
    initial_message: f.initial_message,
    system_prompt: f.system_prompt,
    variables: f.variables,
    webhook_url: f.webhook_url,
    is_webhook_active: f.is_webhook_active,
    created_at: isoMicros(a.createdAt),
    updated_at: isoMicros(a.updatedAt),
  };
}

/** The short answer of assistant create and update. */
export function assistantBrief(a: SimAssistant): Record<string, unknown> {
  return { id: a.id, name: a.fields.name, status: a.fields.status, type: a.fields.type, mode: a.fields.mode };
}

/** Call record (2.6). */
export function callRecord(state: SimState, c: SimCall): Record<string, unknown> {
  const assistant = state.assistants.get(c.assistantId);
  const campaign = c.campaignId === null ? undefined : state.campaigns.get(c.campaignId);
  return {
    id: c.id,
    assistant_name: assistant?.fields.name ?? '',
    campaign_name: campaign?.name ?? null,
    type: c.type,
    duration: c.duration,
    assistant_phone_number: c.assistant_phone_number,
    client_phone_number: c.client_phone_number,
    status: c.status,
    transcript: c.transcript,
    variables: c.variables,
    evaluation: c.evaluation,
    webhook_response: c.webhook_response,
    carrier_cost: c.carrier_cost,
    total_cost: c.total_cost,
    answered_by: c.answered_by,
    recording_url: c.recording_url,
    created_at: plainTime(c.createdAt),
    updated_at: plainTime(c.updatedAt),
  };
}

/** Phone number entry (2.7). */
export function phoneRecord(state: SimState, p: SimPhoneNumber): Record<string, unknown> {
  return {
    id: p.id,
    phone_number: p.phone_number,
    country_code: p.country_code,
    type_label: p.type_label,
    is_available: p.type_label !== 'Caller ID' && !state.isAssigned(p.id),
  };
}
