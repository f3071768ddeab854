import crypto from 'node:crypto';
import { z } from 'zod';
import type { ItemOutcome } from '../../leads/import-items.js';
import type { LeadItem } from '../../leads/lead-items.js';
import { normalisePhone } from '../../leads/phone.js';
import { IdempotencyKeyReused, postLeads } from '../../leads/post-leads.js';
import { getCampaignByName } from '../../store/campaigns.js';
import { cancelLead } from '../../store/lead-cancel.js';
import { changeLeadVariables, leadIdsBy, leadView, parseVariables, type LeadView } from '../../store/lead-view.js';
import type { CampaignRow, CampaignState, LeadState } from '../../store/types.js';
import type { ApiDeps } from '../deps.js';
import { plainLeadItems } from '../lead-items-check.js';
import { ApiProblem } from '../problem.js';
import { defineRoute, type Route } from '../route.js';
import { requestSchema, responseSchema } from '../schemas.js';

// Leads through the API: add one or up to 10,000 to a campaign (read and checked exactly as
// a lead file's rows are: src/leads/import-rows.ts), look them up by id, by the caller's
// own id (external_id) or by number, change their variables, cancel them.

/** The outcomes of an item that stored a new lead (a row the planner's statistics should know of). */
const NEW_ROWS: ReadonlySet<ItemOutcome['outcome']> = new Set(['accepted', 'invalid', 'suppressed']);

/** Items per POST. */
export const MAX_ITEMS = 10_000;

const variableValue = z.union([z.string(), z.number(), z.boolean()]);

const LeadItemSchema = requestSchema(
  'LeadInput',
  z
    .strictObject({
      phone_number: z.string().max(64).meta({ description: 'E.164 (`+4930…`), or national with `country` or the campaign\'s `default_country`. A number that is not one makes an `invalid` lead, kept with the reason.' }),
      external_id: z.string().min(1).max(200).optional().meta({ description: "Your own id of the lead, unique in the campaign: posting it again updates the lead while it has not been called; look the lead up by it." }),
      variables: z.record(z.string().min(1).max(200), variableValue).optional().meta({ description: 'Passed to the assistant with the call, as strings (numbers and booleans are written out).' }),
      secondary_phone_numbers: z.array(z.string().max(64)).max(20).optional().meta({ description: 'Further numbers of the same person, called in this order after the first.' }),
      timezone: z.string().max(64).optional().meta({ description: "IANA zone of the called person (for the campaign's lead_local_hours); else taken from the number." }),
      country: z.string().max(8).optional().meta({ description: 'ISO 3166 alpha-2 country of a national number.' }),
    })
    .meta({ description: 'One lead, as a row of a lead file.' }),
);

const PostBody = requestSchema(
  'LeadsInput',
  z.union([LeadItemSchema, z.array(LeadItemSchema).min(1).max(MAX_ITEMS, `at most ${MAX_ITEMS.toLocaleString('en')} leads per request: send the rest in another request`)]).meta({ description: 'One lead, or an array of up to 10,000.' }),
);

const ItemOutcomeSchema = z.object({
  id: z.number().int().nullable().meta({ description: 'The lead (for a duplicate: the lead it repeats, when stored).' }),
  external_id: z.string().nullable(),
  outcome: z.enum(['accepted', 'updated', 'unchanged', 'duplicate', 'suppressed', 'invalid']),
  reason: z.string().nullable(),
});

const PostAnswer = responseSchema('LeadsAdded', z.object({ items: z.array(ItemOutcomeSchema).meta({ description: "One answer per item, in the request's order." }) }));

export const LEAD_STATES = ['pending', 'calling', 'retry-scheduled', 'completed', 'reached-max-retries', 'invalid', 'suppressed', 'cancelled', 'moved'] as const satisfies readonly LeadState[];
const iso = z.string().meta({ description: 'ISO 8601, UTC.' });

const LeadSchema = responseSchema(
  'Lead',
  z.object({
    id: z.number().int(),
    campaign: z.string(),
    external_id: z.string().nullable(),
    phone_number: z.string(),
    secondary_phone_numbers: z.array(z.string()),
    state: z.enum(LEAD_STATES),
    state_reason: z.string().nullable(),
    variables: z.record(z.string(), z.string()),
    timezone: z.string().nullable(),
    next_due_at: iso.nullable(),
    created_at: iso,
    updated_at: iso,
    attempts: z.array(
      z.object({
        id: z.number().int(),
        phone_number: z.string(),
        state: z.string(),
        call_status: z.string().nullable(),
        outcome: z.string().nullable(),
        detail: z.string().nullable(),
        created_at: iso,
        ended_at: iso.nullable(),
      }),
    ),
    result: z
      .object({
        attempt_id: z.number().int(),
        call_id: z.string().nullable(),
        status: z.string().nullable(),
        answered_by: z.string().nullable(),
        duration_seconds: z.number().nullable(),
        started_at: iso.nullable(),
        ended_at: iso.nullable(),
        cost: z.number().nullable(),
        recording_url: z.string().nullable(),
        transcript: z.unknown(),
        extracted: z.unknown(),
        evaluation: z.unknown(),
      })
      .nullable()
      .meta({ description: "The result of the lead's latest call that has one." }),
  }),
);

const LeadList = responseSchema('LeadList', z.object({ leads: z.array(LeadSchema).meta({ description: 'Oldest first; empty when none matches.' }) }));

const VariablesPatch = requestSchema(
  'LeadPatch',
  z.strictObject({
    variables: z.record(z.string().min(1).max(200), variableValue.nullable()).meta({ description: 'JSON merge patch (RFC 7396) of the variables: a value sets one, null removes it.' }),
  }),
);

const CancelAnswer = responseSchema(
  'LeadCancelled',
  z.object({
    id: z.number().int(),
    state: z.enum(LEAD_STATES),
    changed: z.boolean().meta({ description: 'False when the lead was final already (nothing changed).' }),
    live_call: z.boolean().meta({ description: 'A call was live: it finishes and its result is kept; no further attempt.' }),
  }),
);

const NameParams = z.object({ name: z.string().min(1) });
const IdParams = z.object({ id: z.coerce.number().int().positive().meta({ description: 'The lead id.' }) });
const LookupQuery = z
  .strictObject({ external_id: z.string().min(1).optional(), phone_number: z.string().min(1).optional() })
  .refine((q) => (q.external_id === undefined) !== (q.phone_number === undefined), { message: 'give exactly one of external_id or phone_number' });

const IDEMPOTENCY_HEADER = 'idempotency-key';
const KEY_FORMAT = /^[\x21-\x7e]{1,255}$/;
/** Campaign states in which the engine acts on a new lead: it dials a running one, reopens a completed one. */
const WAKES_FOR_NEW_LEADS: ReadonlySet<CampaignState> = new Set(['running', 'completed']);

async function campaignNamed(deps: ApiDeps, name: string): Promise<CampaignRow> {
  const row = await getCampaignByName(deps.readDb ?? deps.db, name);
  if (!row) throw new ApiProblem(404, 'Not found', `no campaign "${name}"`);
  return row;
}

function settingsOf(row: CampaignRow): { allowDuplicates: boolean; defaultCountry?: string } {
  const cfg = JSON.parse(row.config_json) as { allowDuplicates?: boolean; defaultCountry?: string };
  return { allowDuplicates: cfg.allowDuplicates === true, ...(cfg.defaultCountry ? { defaultCountry: cfg.defaultCountry } : {}) };
}

const isoOf = (ms: number): string => new Date(Number(ms)).toISOString();
const isoOrNull = (ms: number | null): string | null => (ms === null ? null : isoOf(ms));

function jsonOrNull(text: string | null): unknown {
  if (text === null) return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function leadBody(v: LeadView): z.infer<typeof LeadSchema> {
  const { lead, result } = v;
  return {
    id: Number(lead.id),
    campaign: v.campaign,
    external_id: lead.external_id,
    phone_number: lead.phone_number,
    secondary_phone_numbers: v.secondary,
    state: lead.state,
    state_reason: lead.state_reason,
    variables: parseVariables(lead.variables_json),
    timezone: lead.timezone,
    next_due_at: isoOrNull(lead.next_due_at),
    created_at: isoOf(lead.created_at),
    updated_at: isoOf(lead.updated_at),
    attempts: v.attempts.map((a) => ({
      id: Number(a.id),
      phone_number: a.phone_number,
      state: a.state,
      call_status: a.call_status,
      outcome: a.outcome,
      detail: a.detail,
      created_at: isoOf(a.created_at),
      ended_at: isoOrNull(a.ended_at),
    })),
    result: result
      ? {
          attempt_id: Number(result.attempt_id),
          call_id: result.call_id,
          status: result.status,
          answered_by: result.answered_by,
          duration_seconds: result.duration_seconds,
          started_at: isoOrNull(result.started_at),
          ended_at: isoOrNull(result.ended_at),
          cost: result.cost,
          recording_url: result.recording_url,
          transcript: jsonOrNull(result.transcript_json),
          extracted: jsonOrNull(result.extracted_json),
          evaluation: jsonOrNull(result.evaluation_json),
        }
      : null,
  };
}

async function leadOr404(deps: ApiDeps, id: number): Promise<LeadView> {
  const view = await leadView(deps.readDb ?? deps.db, id);
  if (!view) throw new ApiProblem(404, 'Not found', `no lead ${id}`);
  return view;
}

const post = defineRoute<{ name: string }, undefined, z.infer<typeof PostBody>>({
  method: 'POST',
  path: '/campaigns/{name}/leads',
  operationId: 'addLeads',
  summary: 'Add one lead or up to 10,000 to a campaign',
  description:
    'Each lead is checked and stored exactly as a row of a lead file (default country, suppression list, duplicates; a bad number is kept as an `invalid` lead with its reason), and the answer says what became of each. ' +
    'A lead with an `external_id` seen before in the campaign is updated while it has not been called (its number too), else left as it is. ' +
    'With an `Idempotency-Key` header a retried request gets the first answer and writes nothing again (for 24 hours); the same key with another body is refused (422). ' +
    'All items are written in one transaction: a request that fails writes nothing.',
  tag: 'leads',
  scope: 'write',
  params: NameParams,
  body: PostBody,
  bodyPrecheck: (value) => plainLeadItems(value, MAX_ITEMS),
  headers: [{ name: 'Idempotency-Key', description: 'Any string of 1–255 visible ASCII characters, new for each new request; kept 24 hours.' }],
  responses: { 200: { description: 'What became of each item.', schema: PostAnswer } },
  problems: { 422: 'The body does not fit its schema (`errors` lists each field; more than 10,000 items is one such), or the Idempotency-Key was used for another request.' },
  handle: async ({ params, body, headers, keyName, deps }) => {
    const raw = headers[IDEMPOTENCY_HEADER];
    const key = Array.isArray(raw) ? raw[0] : raw;
    if (key !== undefined && !KEY_FORMAT.test(key)) throw new ApiProblem(400, 'Invalid header', 'Idempotency-Key must be 1 to 255 visible ASCII characters');
    const row = await campaignNamed(deps, params.name);
    const items = (Array.isArray(body) ? body : [body]) as LeadItem[];
    // The digest only under a key: 10,000 items written out again cost a few milliseconds.
    const requestHash = (): string => crypto.createHash('sha256').update(`POST /campaigns/${params.name}/leads\n${JSON.stringify(body)}`).digest('hex');
    // Only a campaign the engine dials now (or reopens: completed) has a use for a pass at
    // once; a paused or stopped one is woken by its resume. A pass costs about a millisecond
    // of the event loop even when it claims nothing, at 100 POSTs a second a tenth of it;
    // on PostgreSQL the POST's NOTIFY (every instance's engine) is skipped alike: a
    // statement less, and a pass less on each instance.
    const wakes = WAKES_FOR_NEW_LEADS.has(row.state);
    let stored = 0;
    try {
      const posted = await postLeads(deps.db, { id: row.id, ...settingsOf(row) }, items, {
        now: deps.clock.now(),
        announce: wakes,
        ...(key !== undefined ? { idempotency: { owner: keyName ?? '', key, requestHash: requestHash() } } : {}),
        answer: (outcomes: ItemOutcome[]) => {
          stored = outcomes.filter((o) => NEW_ROWS.has(o.outcome)).length;
          return { status: 200, body: { items: outcomes } };
        },
      });
      if (!posted.replayed) deps.leadsStored?.(row.id, stored);
      if (!posted.replayed && wakes) deps.wake();
      return { status: posted.status, body: posted.body, ...(posted.replayed ? { headers: { 'Idempotent-Replayed': 'true' } } : {}) };
    } catch (err) {
      if (err instanceof IdempotencyKeyReused) throw new ApiProblem(422, 'Idempotency key reused', err.message);
      throw err;
    }
  },
});

const getOne = defineRoute<{ id: number }>({
  method: 'GET',
  path: '/leads/{id}',
  operationId: 'getLead',
  summary: 'One lead with its state, attempts and result',
  tag: 'leads',
  scope: 'read',
  params: IdParams,
  responses: { 200: { description: 'The lead.', schema: LeadSchema } },
  handle: async ({ params, deps }) => ({ status: 200, body: leadBody(await leadOr404(deps, params.id)) }),
});

const lookup = defineRoute<{ name: string }, z.infer<typeof LookupQuery>>({
  method: 'GET',
  path: '/campaigns/{name}/leads',
  operationId: 'findLeads',
  summary: "A campaign's leads with your external_id, or with a phone number",
  description: 'Exactly one of `external_id` or `phone_number` (read as a lead file reads it, with the campaign\'s default country). A number may match several leads when the campaign allows duplicates.',
  tag: 'leads',
  scope: 'read',
  params: NameParams,
  query: LookupQuery,
  responses: { 200: { description: 'The matching leads.', schema: LeadList } },
  handle: async ({ params, query, deps }) => {
    const row = await campaignNamed(deps, params.name);
    let by: { externalId: string } | { phoneNumber: string };
    if (query.external_id !== undefined) {
      by = { externalId: query.external_id };
    } else {
      const phone = normalisePhone(query.phone_number!, settingsOf(row).defaultCountry);
      if (!phone.ok) throw new ApiProblem(400, 'Invalid query', `phone_number: ${phone.needsCountry ? 'a national number needs default_country in the campaign; send it as +E.164' : phone.reason}`, [{ pointer: '/query/phone_number', message: phone.reason }]);
      by = { phoneNumber: phone.e164 };
    }
    const reader = deps.readDb ?? deps.db;
    const ids = await leadIdsBy(reader, row.id, by);
    const views = await Promise.all(ids.map((id) => leadView(reader, id)));
    return { status: 200, body: { leads: views.filter((v): v is LeadView => v !== undefined).map(leadBody) } };
  },
});

const patch = defineRoute<{ id: number }, undefined, z.infer<typeof VariablesPatch>>({
  method: 'PATCH',
  path: '/leads/{id}',
  operationId: 'changeLead',
  summary: "Change a lead's variables (not while it is being called)",
  description: 'A JSON merge patch of `variables`: a value sets one, null removes it. Refused with 409 while the lead is in a call (the call goes on with the variables it was placed with).',
  tag: 'leads',
  scope: 'write',
  params: IdParams,
  body: VariablesPatch,
  responses: { 200: { description: 'The lead as changed.', schema: LeadSchema } },
  problems: { 409: 'The lead is being called.' },
  handle: async ({ params, body, deps }) => {
    const changed = await changeLeadVariables(
      deps.db,
      params.id,
      (current) => {
        const next = { ...current };
        for (const [name, value] of Object.entries(body.variables)) {
          if (value === null) delete next[name];
          else next[name] = String(value);
        }
        return next;
      },
      deps.clock.now(),
    );
    if (changed.kind === 'not-found') throw new ApiProblem(404, 'Not found', `no lead ${params.id}`);
    if (changed.kind === 'live') throw new ApiProblem(409, 'Conflict', `lead ${params.id} is being called: change its variables once the call ended`);
    return { status: 200, body: leadBody(await leadOr404(deps, params.id)) };
  },
});

const cancel = defineRoute<{ id: number }>({
  method: 'DELETE',
  path: '/leads/{id}',
  operationId: 'cancelLead',
  summary: 'Cancel a lead: no further attempt (a live call is not cut)',
  tag: 'leads',
  scope: 'write',
  params: IdParams,
  responses: { 200: { description: 'The lead is cancelled (or was final already).', schema: CancelAnswer } },
  handle: async ({ params, keyName, deps }) => {
    const result = await cancelLead(deps.db, params.id, { now: deps.clock.now(), reason: keyName ? `cancelled through the API (key ${keyName})` : 'cancelled through the API' });
    if (result.kind === 'not-found') throw new ApiProblem(404, 'Not found', `no lead ${params.id}`);
    if (result.kind === 'already-final') return { status: 200, body: { id: params.id, state: result.state, changed: false, live_call: false } };
    deps.logger.info({ lead: params.id, liveCall: result.kind === 'cancelled-live-call' }, 'lead cancelled through the API');
    return { status: 200, body: { id: params.id, state: 'cancelled', changed: true, live_call: result.kind === 'cancelled-live-call' } };
  },
});

export const leadRoutes: Route[] = [post, lookup, getOne, patch, cancel];
