import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import {
  callSchema,
  leadSchema,
  assistantSchema,
  paginated,
  postCallWebhookSchema,
  parseServiceTime,
  FINAL_CALL_STATUSES,
  IN_PROGRESS_STATUSES,
  CALL_STATUSES,
} from '../../src/service/schema/records.js';
import {
  createAssistantRequest,
  createLeadRequest,
  createToolRequest,
  fieldErrors,
  listAssistantsQuery,
  listCallsQuery,
  makeCallRequest,
  updateAssistantRequest,
  updateToolRequest,
  enableInboundWebhookRequest,
} from '../../src/service/schema/requests.js';
import type { z } from 'zod';

function errorsOf(schema: z.ZodType, input: unknown): Record<string, string[]> {
  const r = schema.safeParse(input);
  if (r.success) throw new Error(`expected a failure, got ${JSON.stringify(r.data)}`);
  return fieldErrors(r.error);
}

describe('record schemas parse what the service sends in the wild', () => {
  it('reads ids as strings, variables as [], transcript arrays, costs as strings, null answered_by', () => {
    const call = callSchema.parse({
      id: '1234569',
      status: 'completed',
      client_phone_number: '+4915112345678',
      variables: [],
      evaluation: [],
      transcript: [
        { text: 'Hello', type: 'assistant', sender: 'AI', timestamp: '2026-01-05 09:00:01' },
        { text: 'Hi', type: 'user', sender: null, timestamp: 3 },
      ],
      carrier_cost: '0.0125',
      total_cost: 0.5,
      answered_by: null,
      brand_new_field: { a: 1 },
    });
    expect(call.id).toBe(1234569);
    expect(call.variables).toEqual({});
    expect(call.evaluation).toEqual({});
    expect(call.transcript).toBe('AI: Hello\nuser: Hi');
    expect(call.carrier_cost).toBe(0.0125);
    expect(call.total_cost).toBe(0.5);
    expect(call.answered_by).toBeNull();
    expect(call.recording_url).toBeNull();
    expect((call as Record<string, unknown>)['brand_new_field']).toEqual({ a: 1 });
  });

  it('keeps a string transcript and tolerates missing optional fields', () => {
    const call = callSchema.parse({ id: 7, status: 'ringing', transcript: 'plain' });
    expect(call.transcript).toBe('plain');
    expect(call.created_at).toBeNull();
    expect(callSchema.parse({ id: 8, status: 'failed' }).transcript).toBe('');
  });

  it('rejects a call without id or with a non-numeric id', () => {
    expect(callSchema.safeParse({ status: 'completed' }).success).toBe(false);
    expect(callSchema.safeParse({ id: 'abc', status: 'completed' }).success).toBe(false);
  });

  it('reads a lead with secondary contacts and string ids', () => {
    const lead = leadSchema.parse({
      id: '10',
      campaign_id: '3',
      phone_number: '+14155550100',
      variables: { name: 'Ada' },
      status: 'created',
      campaign: { id: '3', name: 'Spring' },
      secondary_contacts: [{ id: '11', phone_number: '+14155550101', variables: [], status: 'created' }],
    });
    expect(lead.campaign_id).toBe(3);
    expect(lead.campaign).toMatchObject({ id: 3, name: 'Spring' });
    expect(lead.secondary_contacts[0]).toMatchObject({ id: 11, variables: {} });
  });

  it('reads numeric strings of an assistant record as numbers', () => {
    const a = assistantSchema.parse({ id: 5, name: 'A', llm_temperature: '0.7', speech_speed: '1.0', fillers: 1, phone_number_id: null });
    expect(a.llm_temperature).toBe(0.7);
    expect(a.speech_speed).toBe(1);
    expect(a.phone_number_id).toBeNull();
  });

  it('parses the pagination envelope', () => {
    const page = paginated(callSchema).parse({ current_page: 2, data: [{ id: 1, status: 'busy' }], next_page_url: null, last_page: 2, total: 11, links: [{ url: null, label: '&laquo;', active: false }] });
    expect(page.current_page).toBe(2);
    expect(page.data[0]?.id).toBe(1);
  });

  it('parses a post-call webhook payload with and without lead', () => {
    const p = postCallWebhookSchema.parse({ id: '99', status: 'completed', customer_phone: '+14155550100', transcript: [{ text: 'x', sender: 'AI' }], lead: { id: 4, phone_number: '+14155550100', variables: [] }, campaign: null });
    expect(p.id).toBe(99);
    expect(p.lead?.variables).toEqual({});
    expect(postCallWebhookSchema.parse({ id: 1, status: 'busy' }).lead).toBeNull();
  });

  it('splits statuses into in-progress and final without overlap', () => {
    expect([...IN_PROGRESS_STATUSES, ...FINAL_CALL_STATUSES].sort()).toEqual([...CALL_STATUSES].sort());
  });
});

describe('parseServiceTime', () => {
  it('reads naive stamps in the server zone', () => {
    expect(parseServiceTime('2026-01-05 09:00:00', 'Europe/Berlin')).toBe(Date.UTC(2026, 0, 5, 8, 0, 0));
    expect(parseServiceTime('2026-07-05 09:00:00', 'America/New_York')).toBe(Date.UTC(2026, 6, 5, 13, 0, 0));
    expect(parseServiceTime('2026-01-05 09:00:00', 'UTC')).toBe(Date.UTC(2026, 0, 5, 9, 0, 0));
  });
  it('reads ISO 8601 with Z or offset, with or without microseconds, ignoring the server zone', () => {
    expect(parseServiceTime('2026-01-05T09:00:00.123456Z', 'Europe/Berlin')).toBe(Date.UTC(2026, 0, 5, 9, 0, 0, 123));
    expect(parseServiceTime('2026-01-05T09:00:00Z', 'Asia/Kathmandu')).toBe(Date.UTC(2026, 0, 5, 9, 0, 0));
    expect(parseServiceTime('2026-01-05T09:00:00+05:45', 'UTC')).toBe(Date.UTC(2026, 0, 5, 3, 15, 0));
  });
  it('returns null for what it cannot read', () => {
    expect(parseServiceTime('yesterday', 'UTC')).toBeNull();
    expect(parseServiceTime('', 'UTC')).toBeNull();
    expect(parseServiceTime(null, 'UTC')).toBeNull();
    expect(parseServiceTime('2026-02-30 10:00:00', 'UTC')).toBeNull();
    expect(parseServiceTime('2026-13-01 10:00:00', 'UTC')).toBeNull();
  });
  it('reads naive stamps in UTC as luxon does, fractions cut to milliseconds', () => {
    const samples = ['2026-01-05 09:00:00', '2026-01-05T09:00', '2028-02-29 23:59:59.999999', '2026-01-05 09:00:00.5', '2026-01-05 09:00:00.12', '2026-01-05 24:00:00'];
    for (const s of samples) expect(parseServiceTime(s, 'UTC')).toBe(DateTime.fromISO(s.replace(' ', 'T').replace(/(\.\d{3})\d+/, '$1'), { zone: 'UTC' }).toMillis());
  });
});

describe('request schemas carry the rules of the spec', () => {
  const tool = { name: 'check_stock', description: 'Checks stock', endpoint: 'https://api.example/stock', method: 'POST' };

  it('accepts a valid tool and rejects each broken rule of 2.1 under its field path', () => {
    expect(createToolRequest.parse(tool)).toMatchObject(tool);
    const errs = errorsOf(createToolRequest, {
      name: 'CheckStock',
      description: 'x'.repeat(256),
      endpoint: 'not a url',
      method: 'FETCH',
      timeout: 31,
      headers: [{ name: 'X-A' }],
      schema: [{ name: 'a', type: 'date', description: 'ab' }],
    });
    expect(Object.keys(errs).sort()).toEqual(
      ['description', 'endpoint', 'headers.0.value', 'method', 'name', 'schema.0.description', 'schema.0.name', 'schema.0.type', 'timeout'].sort(),
    );
    expect(errs['headers.0.value']).toEqual(['The headers.0.value field is required.']);
    expect(errorsOf(createToolRequest, { ...tool, timeout: 0 })['timeout']).toBeDefined();
    expect(errorsOf(createToolRequest, { ...tool, name: '1abc' })['name']).toBeDefined();
  });

  it('takes tool updates with every field optional and the same timeout range', () => {
    expect(updateToolRequest.parse({ timeout: 30 })).toEqual({ timeout: 30 });
    expect(errorsOf(updateToolRequest, { timeout: 31 })['timeout']).toBeDefined();
  });

  it('checks leads: E.164, campaign id, allow_dupplicate, secondary contacts', () => {
    const ok = createLeadRequest.parse({ phone_number: '+14155550100', campaign_id: 3, allow_dupplicate: true, variables: [], secondary_contacts: [{ phone_number: '+14155550101' }] });
    expect(ok.variables).toEqual({});
    const errs = errorsOf(createLeadRequest, { phone_number: '004915', secondary_contacts: [{ phone_number: '+0' }] });
    expect(Object.keys(errs).sort()).toEqual(['campaign_id', 'phone_number', 'secondary_contacts.0.phone_number']);
    expect(errs['campaign_id']).toEqual(['The campaign id field is required.']);
  });

  it('checks make_call phone numbers', () => {
    expect(makeCallRequest.safeParse({ phone_number: '+14155550100', assistant_id: 1 }).success).toBe(true);
    for (const bad of ['14155550100', '+0155550100', '+123456', '+1234567890123456']) {
      expect(makeCallRequest.safeParse({ phone_number: bad, assistant_id: 1 }).success).toBe(false);
    }
  });

  it('requires assistant_name on create and webhook_url when is_webhook_active, also with other errors', () => {
    const errs = errorsOf(createAssistantRequest, { is_webhook_active: true, speech_speed: 1.3 });
    expect(Object.keys(errs).sort()).toEqual(['assistant_name', 'speech_speed', 'webhook_url']);
    expect(errs['assistant_name']).toEqual(['The assistant name field is required.']);
    expect(errorsOf(updateAssistantRequest, { is_webhook_active: true, webhook_url: null })['webhook_url']).toBeDefined();
    expect(updateAssistantRequest.parse({ is_webhook_active: false, webhook_url: null })).toEqual({ is_webhook_active: false, webhook_url: null });
  });

  it('holds every numeric range of 4.10 at its bounds', () => {
    const ranges: [string, number, number][] = [
      ['endpoint_sensitivity', 0, 5], ['interrupt_sensitivity', 0, 5], ['ambient_sound_volume', 0, 1],
      ['llm_temperature', 0, 1], ['voice_stability', 0, 1], ['voice_similarity', 0, 1], ['speech_speed', 0.7, 1.2],
      ['min_interrupt_words', 0, 10], ['re_engagement_interval', 7, 600], ['max_call_duration', 20, 1200],
      ['max_silence_duration', 1, 120],
    ];
    for (const [field, min, max] of ranges) {
      expect(updateAssistantRequest.safeParse({ [field]: min }).success, `${field}=${min}`).toBe(true);
      expect(updateAssistantRequest.safeParse({ [field]: max }).success, `${field}=${max}`).toBe(true);
      expect(errorsOf(updateAssistantRequest, { [field]: min - 0.01 })[field], `${field} below`).toBeDefined();
      expect(errorsOf(updateAssistantRequest, { [field]: max + 0.01 })[field], `${field} above`).toBeDefined();
    }
  });

  it('checks enums, lengths, timezone and post_call_schema items of 4.10', () => {
    const errs = errorsOf(updateAssistantRequest, {
      assistant_name: 'n'.repeat(256),
      language: 'l'.repeat(101),
      calls_direction: 'both',
      engine_type: 'hybrid',
      endpoint_type: 'x',
      who_speaks_first: 'Nobody',
      timezone: 'Mars/Olympus',
      webhook_url: 'ftp://x',
      end_call_tool: { description: 'd'.repeat(501) },
      post_call_schema: [{ name: 'bad-name', type: 'date' }],
      tool_ids: [1, 'x'],
    });
    expect(Object.keys(errs).sort()).toEqual(
      ['assistant_name', 'calls_direction', 'end_call_tool.description', 'endpoint_type', 'engine_type', 'language',
        'post_call_schema.0.description', 'post_call_schema.0.name', 'post_call_schema.0.type', 'timezone',
        'tool_ids.1', 'webhook_url', 'who_speaks_first'].sort(),
    );
    expect(updateAssistantRequest.parse({ timezone: 'Europe/Berlin', tool_ids: [], who_speaks_first: 'AI assistant' })).toMatchObject({ tool_ids: [] });
  });

  it('requires both fields of enable-inbound-webhook', () => {
    expect(Object.keys(errorsOf(enableInboundWebhookRequest, {})).sort()).toEqual(['assistant_id', 'webhook_url']);
  });

  it('reads list queries from strings with defaults and bounds', () => {
    expect(listCallsQuery.parse({})).toEqual({ per_page: 15, page: 1 });
    expect(listCallsQuery.parse({ per_page: '100', page: '3', assistant_id: '4', date_from: '2026-01-05' })).toMatchObject({ per_page: 100, page: 3, assistant_id: 4 });
    const errs = errorsOf(listCallsQuery, { per_page: '0', page: '0', status: 'done', type: 'sms', date_to: '05/01/2026' });
    expect(Object.keys(errs).sort()).toEqual(['date_to', 'page', 'per_page', 'status', 'type']);
    expect(listAssistantsQuery.parse({})).toEqual({ per_page: 10, page: 1 });
    expect(listAssistantsQuery.safeParse({ per_page: '101' }).success).toBe(false);
  });

  it('names a body that is not an object under "body"', () => {
    expect(errorsOf(makeCallRequest, 'x')).toEqual({ body: ['The body field must be an object.'] });
  });
});
