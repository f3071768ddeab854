import {
  createAssistantRequest,
  disableInboundWebhookRequest,
  disableWebhookRequest,
  enableInboundWebhookRequest,
  listAssistantsQuery,
  updateAssistantRequest,
} from '../service/schema/requests.js';
import { applyAssistantRequest, referenceErrors } from './assistant-mapping.js';
import { json, message, validationFailed, type Handler, type RouteContext } from './http-util.js';
import { paginate, parseWith, queryObject } from './pagination.js';
import { assistantBrief, assistantRecord, outboundSummary } from './records.js';
import { addAssistant, defaultAssistantFields } from './seed.js';
import type { SimAssistant } from './types.js';

/** POST /api/user/assistant (4.9). */
export const createAssistant: Handler = ({ body, state, user, clock }) => {
  const parsed = parseWith(createAssistantRequest, body);
  if (!parsed.ok) return validationFailed(parsed.errors);
  const refs = referenceErrors(state, user.id, parsed.data);
  if (Object.keys(refs).length > 0) return validationFailed(refs);
  const type = parsed.data.calls_direction === 'receive' ? 'inbound' : 'outbound';
  const assistant = addAssistant(state, user.id, defaultAssistantFields(state, parsed.data.assistant_name, type), clock.now());
  applyAssistantRequest(state, assistant, parsed.data);
  return json(201, { message: 'Assistant created successfully', data: assistantBrief(assistant) });
};

/** PUT /api/user/assistant/{id} (4.10): only supplied fields change. */
export const updateAssistant: Handler = ({ body, state, user, clock, params }) => {
  const assistant = findAssistant({ state, user }, Number(params.id));
  if (!assistant) return message(404, 'Assistant not found');
  const parsed = parseWith(updateAssistantRequest, body);
  if (!parsed.ok) return validationFailed(parsed.errors);
  const refs = referenceErrors(state, user.id, parsed.data);
  if (Object.keys(refs).length > 0) return validationFailed(refs);
  applyAssistantRequest(state, assistant, parsed.data);
  assistant.updatedAt = clock.now();
  return json(200, { message: 'Assistant updated successfully', data: assistantBrief(assistant) });
};

/** GET /api/user/assistants/get (4.11): full records, paginated (default 10 per page). */
export const listAssistants: Handler = ({ state, user, url, origin }) => {
  const parsed = parseWith(listAssistantsQuery, queryObject(url));
  if (!parsed.ok) return validationFailed(parsed.errors);
  const assistants = live(state.allOf(state.assistants, user.id));
  return json(200, paginate(assistants, parsed.data.page, parsed.data.per_page, origin, url, (a) => assistantRecord(state, a)));
};

/** GET /api/user/assistants/outbound (4.12): a plain array of outbound summaries. */
export const listOutboundAssistants: Handler = ({ state, user }) =>
  json(
    200,
    live(state.allOf(state.assistants, user.id))
      .filter((a) => a.fields.type === 'outbound')
      .map(outboundSummary),
  );

/** POST /api/user/assistants/enable-inbound-webhook (4.13). */
export const enableInboundWebhook: Handler = (ctx) => {
  const parsed = parseWith(enableInboundWebhookRequest, ctx.body);
  if (!parsed.ok) return validationFailed(parsed.errors, 'The given data was invalid.');
  const assistant = findAssistant(ctx, parsed.data.assistant_id);
  if (!assistant) return message(404, 'Assistant not found');
  assistant.fields.inbound_webhook_url = parsed.data.webhook_url;
  assistant.updatedAt = ctx.clock.now();
  return json(200, { message: 'Webhook enabled successfully', data: [] });
};

/** POST /api/user/assistants/disable-inbound-webhook (4.14). */
export const disableInboundWebhook: Handler = (ctx) => {
  const parsed = parseWith(disableInboundWebhookRequest, ctx.body);
  if (!parsed.ok) return validationFailed(parsed.errors, 'The given data was invalid.');
  const assistant = findAssistant(ctx, parsed.data.assistant_id);
  if (!assistant) return message(404, 'Assistant not found');
  assistant.fields.inbound_webhook_url = null;
  assistant.updatedAt = ctx.clock.now();
  return json(200, { message: 'Inbound webhook disabled successfully', data: [] });
};

/** POST /api/user/assistants/disable-webhook (4.15): the configuration is removed completely. */
export const disableWebhook: Handler = (ctx) => {
  const parsed = parseWith(disableWebhookRequest, ctx.body);
  if (!parsed.ok) return validationFailed(parsed.errors, 'The given data was invalid.');
  const assistant = findAssistant(ctx, parsed.data.assistant_id);
  if (!assistant) return message(404, 'Assistant not found');
  assistant.fields.is_webhook_active = false;
  assistant.fields.webhook_url = null;
  assistant.updatedAt = ctx.clock.now();
  return json(200, { message: 'Webhook disabled successfully', data: [] });
};

function findAssistant(ctx: Pick<RouteContext, 'state' | 'user'>, id: number): SimAssistant | undefined {
  const a = ctx.state.owned(ctx.state.assistants, id, ctx.user.id);
  return a && a.fields.deleted_at === null ? a : undefined;
}

function live(list: SimAssistant[]): SimAssistant[] {
  return list.filter((a) => a.fields.deleted_at === null);
}
