// The /api/user endpoints the daemon uses, written from the spec and the live service's reported behaviour:
// make_call (4.7), the call list (4.8), the assistant list and outbound list (4.11, 4.12),
// assistant update (4.10, for webhook_url), campaigns and leads (empty plain arrays).
// Other spec endpoints answer 501: the fake does not pretend to serve them.
import { applyUpdate, fullRecord, outboundSummary } from './assistants.mjs';
import { callRecord } from './calls.mjs';
import { readJson, sendJson } from './http-io.mjs';
import { envelope, pageQuery } from './pages.mjs';
import { stream } from './prng.mjs';
import { localDate } from './server-time.mjs';

const E164 = /^\+[1-9]\d{6,14}$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const NOT_SERVED = [
  ['POST', /^\/api\/user\/tools$/],
  ['PUT', /^\/api\/user\/tools\/[^/]+$/],
  ['POST', /^\/api\/user\/lead$/],
  ['POST', /^\/api\/user\/campaigns\/update-status$/],
  ['POST', /^\/api\/user\/assistant$/],
  ['POST', /^\/api\/user\/assistants\/(enable-inbound-webhook|disable-inbound-webhook|disable-webhook)$/],
  ['GET', /^\/api\/user\/assistants\/(phone-numbers|voices|models)$/],
];

/**
 * Routes one authenticated request that no fault answered; `ctx` holds the state and
 * options, `fault` the answer headers and whether to drop a make_call answer.
 */
export async function routeApi(ctx, req, res, url, fault) {
  const { method } = req;
  const path = url.pathname;
  if (method === 'POST' && path === '/api/user/make_call') return makeCall(ctx, req, res, fault);
  if (method === 'GET' && path === '/api/user/calls') return listCalls(ctx, res, url, fault);
  if (method === 'GET' && path === '/api/user/assistants/get') {
    const items = ctx.assistants.list.map(fullRecord);
    return sendJson(res, 200, envelope(items, pageQuery(url.searchParams, 10, 100), `${ctx.baseUrl}/api/user/assistants/get`), fault.headers);
  }
  if (method === 'GET' && path === '/api/user/assistants/outbound') {
    return sendJson(res, 200, ctx.assistants.list.filter((a) => a.type === 'outbound').map(outboundSummary), fault.headers);
  }
  const update = /^\/api\/user\/assistant\/([^/]+)$/.exec(path);
  if (method === 'PUT' && update) return updateAssistant(ctx, req, res, update[1], fault);
  if (method === 'GET' && (path === '/api/user/campaigns' || path === '/api/user/leads')) return sendJson(res, 200, [], fault.headers);
  if (NOT_SERVED.some(([m, re]) => m === method && re.test(path))) return sendJson(res, 501, { message: 'Not served by the fake service.' }, fault.headers);
  return sendJson(res, 404, { message: 'Not Found' }, fault.headers);
}

async function body(req, res, headers) {
  try {
    const json = await readJson(req);
    if (json === null || typeof json !== 'object' || Array.isArray(json)) {
      sendJson(res, 400, { message: 'The request body must be a JSON object.' }, headers);
      return undefined;
    }
    return json;
  } catch {
    sendJson(res, 400, { message: 'Malformed JSON.' }, headers);
    return undefined;
  }
}

async function makeCall(ctx, req, res, fault) {
  const b = await body(req, res, fault.headers);
  if (!b) return;
  if (typeof b.phone_number !== 'string' || !E164.test(b.phone_number)) {
    return sendJson(res, 400, { message: 'The phone number must be a valid E.164 number.' }, fault.headers);
  }
  const assistant = ctx.assistants.byId(b.assistant_id ?? '');
  if (!assistant || assistant.type !== 'outbound') return sendJson(res, 404, { message: 'Assistant not found' }, fault.headers);
  if (b.variables !== undefined && (b.variables === null || typeof b.variables !== 'object')) {
    return sendJson(res, 422, { message: 'Validation failed', errors: { variables: ['The variables field must be an object.'] } }, fault.headers);
  }
  const variables = Array.isArray(b.variables) ? {} : (b.variables ?? {});
  const call = ctx.calls.create({ phone: b.phone_number, assistant, variables });
  if (fault.dropAfterCreate) {
    // The call exists and will ring; the client only sees its connection die.
    call.answer_dropped = true;
    ctx.faults.countDrop();
    return fault.drop();
  }
  const answer = ctx.opts.callId ? { message: 'Call initiated successfully', call_id: call.id, data: {} } : { message: 'Call initiated successfully', data: {} };
  return sendJson(res, 200, answer, fault.headers);
}

function listCalls(ctx, res, url, fault) {
  const q = url.searchParams;
  const errors = {};
  for (const k of ['date_from', 'date_to']) if (q.has(k) && !DATE.test(q.get(k))) errors[k] = [`The ${k.replace('_', ' ')} field must match the format Y-m-d.`];
  if (Object.keys(errors).length) return sendJson(res, 422, { message: 'Validation failed', errors }, fault.headers);
  const zone = ctx.opts.serverTimezone;
  const digits = (s) => s.replace(/\D/g, '');
  let items = ctx.calls.all().filter((c) => {
    if (q.get('status') && c.status !== q.get('status')) return false;
    if (q.get('type') && q.get('type') !== 'outbound') return false;
    // Partial match on digits (an unencoded "+" arrives as a space).
    if (q.get('phone_number') && !digits(c.client_phone_number).includes(digits(q.get('phone_number')))) return false;
    if (q.get('assistant_id') && c.assistant_id !== q.get('assistant_id').trim()) return false;
    if (q.get('campaign_id')) return false; // no call of this fake belongs to a service campaign
    // Whole days in the SERVER's zone, both ends inclusive.
    const day = localDate(zone, c.created_ms);
    if (q.get('date_from') && day < q.get('date_from')) return false;
    if (q.get('date_to') && day > q.get('date_to')) return false;
    return true;
  });
  // Newest first: pages are stable while calls are only added (a call may show twice
  // across pages, never go missing), but the order WITHIN a page changes per request.
  items = [...items].sort((a, b) => b.created_ms - a.created_ms);
  const page = pageQuery(q, 15, ctx.opts.maxPerPage);
  ctx.stats.call_list_pages[page.page] = (ctx.stats.call_list_pages[page.page] ?? 0) + 1;
  const rand = ctx.opts.listOrder === 'page-shuffled' ? stream(ctx.opts.seed, 'list', ctx.stats.requests) : null;
  const env = envelope(items, page, `${ctx.baseUrl}/api/user/calls`, rand);
  env.data = env.data.map((c) => callRecord(c, zone));
  return sendJson(res, 200, env, fault.headers);
}

async function updateAssistant(ctx, req, res, id, fault) {
  const b = await body(req, res, fault.headers);
  if (!b) return;
  const a = ctx.assistants.byId(id);
  if (!a) return sendJson(res, 404, { message: 'Assistant not found' }, fault.headers);
  const errors = applyUpdate(a, b);
  if (errors) return sendJson(res, 422, { message: 'Validation failed', errors }, fault.headers);
  return sendJson(res, 200, { message: 'Assistant updated successfully', data: { id: a.id, name: a.name, status: a.status, type: a.type, mode: a.mode } }, fault.headers);
}
