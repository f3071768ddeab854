import { E164_PATTERN, listCallsQuery, makeCallRequest } from '../service/schema/requests.js';
import { placeCall } from './call-lifecycle.js';
import type { LifecycleDeps } from './lifecycle-deps.js';
import { isObject, json, message, validationFailed, type Handler } from './http-util.js';
import { paginate, parseWith, queryObject } from './pagination.js';
import { callRecord } from './records.js';
import { DAY_MS, parseDay } from './time-format.js';
import type { SimCall } from './types.js';

/**
 * POST /api/user/make_call (4.7). A number that is not E.164 gets 400 `{message}` and an
 * assistant that is missing, another user's or inbound gets 404, as the live service is
 * reported to answer (docs/simulator.md); other bad fields get the usual 422.
 */
export function makeCall(deps: LifecycleDeps, callIdInResponse: boolean): Handler {
  return ({ body, state, user }) => {
    const phone = isObject(body) ? body.phone_number : undefined;
    if (typeof phone !== 'string' || !E164_PATTERN.test(phone)) {
      return message(400, 'Invalid phone number format. The phone number must be in E.164 format (e.g. +14155550123).');
    }
    const parsed = parseWith(makeCallRequest, body);
    if (!parsed.ok) return validationFailed(parsed.errors);
    const assistant = state.owned(state.assistants, parsed.data.assistant_id, user.id);
    if (!assistant || assistant.fields.type !== 'outbound' || assistant.fields.deleted_at !== null) {
      return message(404, 'Assistant not found');
    }
    const call = placeCall(deps, user, assistant, parsed.data.phone_number, parsed.data.variables ?? {});
    const answer = callIdInResponse
      ? { message: 'Call initiated successfully', call_id: call.id, status: call.status, data: {} }
      : { message: 'Call initiated successfully', data: {} };
    return { ...json(200, answer), createdCall: true };
  };
}

/** GET /api/user/calls (4.8): filters the live service is reported to take (docs/simulator.md), newest first, paginated. */
export const listCalls: Handler = ({ state, user, url, origin }) => {
  const parsed = parseWith(listCallsQuery, queryObject(url));
  if (!parsed.ok) return validationFailed(parsed.errors);
  const q = parsed.data;
  const from = q.date_from === undefined ? null : parseDay(q.date_from);
  const to = q.date_to === undefined ? null : parseDay(q.date_to);
  const phone = q.phone_number === undefined ? null : digits(q.phone_number);
  const matches = (c: SimCall): boolean =>
    c.userId === user.id &&
    (q.status === undefined || c.status === q.status) &&
    (q.type === undefined || c.type === q.type) &&
    (phone === null || digits(c.client_phone_number) === phone) &&
    (q.assistant_id === undefined || c.assistantId === q.assistant_id) &&
    (q.campaign_id === undefined || c.campaignId === q.campaign_id) &&
    (from === null || c.createdAt >= from) &&
    (to === null || c.createdAt < to + DAY_MS);
  // One pass, no sort: calls enter `state.calls` as they are created, with rising ids, and
  // never leave, so the map's own order is oldest first. A daemon lists every few
  // milliseconds under load; copying, filtering eight times and sorting every call the
  // simulator ever made cost the simulator's CPU, which the daemon shares on one machine.
  const calls: SimCall[] = [];
  for (const c of state.calls.values()) if (matches(c)) calls.push(c);
  calls.reverse();
  return json(200, paginate(calls, q.page, q.per_page, origin, url, (c) => callRecord(state, c)));
};

// Compares numbers by digits: an unencoded `+` in a query string arrives as a space.
function digits(text: string): string {
  return text.replace(/\D/g, '');
}
