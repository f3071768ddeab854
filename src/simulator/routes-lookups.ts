import { listPhoneNumbersQuery, listVoicesQuery } from '../service/schema/requests.js';
import { json, validationFailed, type Handler } from './http-util.js';
import { parseWith, queryObject } from './pagination.js';
import { phoneRecord } from './records.js';

/** GET /api/user/assistants/phone-numbers (4.16): `type=inbound` hides Caller ID and assigned numbers. */
export const listPhoneNumbers: Handler = ({ state, user, url }) => {
  const parsed = parseWith(listPhoneNumbersQuery, queryObject(url));
  if (!parsed.ok) return validationFailed(parsed.errors);
  const inbound = parsed.data.type === 'inbound';
  const list = state
    .allOf(state.phoneNumbers, user.id)
    .filter((p) => !inbound || (p.type_label !== 'Caller ID' && !state.isAssigned(p.id)))
    .map((p) => phoneRecord(state, p));
  return json(200, list);
};

/** GET /api/user/assistants/voices (4.17): public voices and the caller's own. */
export const listVoices: Handler = ({ state, user, url }) => {
  const parsed = parseWith(listVoicesQuery, queryObject(url));
  if (!parsed.ok) return validationFailed(parsed.errors);
  const list = state
    .voicesFor(user.id)
    .filter((v) => parsed.data.mode === undefined || v.mode === parsed.data.mode)
    .sort((a, b) => a.id - b.id)
    .map((v) => ({ id: v.id, name: v.name, mode: v.mode }));
  return json(200, list);
};

/** GET /api/user/assistants/models (4.18). */
export const listModels: Handler = ({ state }) =>
  json(200, [...state.models.values()].map((m) => ({ id: m.id, name: m.name })));
