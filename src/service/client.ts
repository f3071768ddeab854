import type { Clock } from '../time/clock.js';
import type { Logger } from '../log/logger.js';
import { createHttpTransport } from './http-transport.js';
import { createRateBudget, type RateBudget } from './rate-budget.js';
import { createExecutor, type RequestEvent } from './request-executor.js';
import { iteratePages, parseListAnswer, type ListPage } from './pages.js';
import { isRecord, RequestWithheldError } from './errors.js';
import {
  assistantSchema,
  assistantSummarySchema,
  callSchema,
  campaignSchema,
  campaignStatusResultSchema,
  leadSchema,
  llmModelSchema,
  outboundAssistantSchema,
  phoneNumberSchema,
  toolSchema,
  voiceSchema,
  type Assistant,
  type AssistantSummary,
  type Call,
  type Campaign,
  type Lead,
  type LlmModel,
  type OutboundAssistant,
  type PhoneNumber,
  type Tool,
  type Voice,
} from './schema/records.js';
import type {
  CreateAssistantRequest,
  CreateLeadRequest,
  CreateToolRequest,
  EnableInboundWebhookRequest,
  ListAssistantsQuery,
  ListCallsQuery,
  ListLeadsQuery,
  ListPhoneNumbersQuery,
  ListVoicesQuery,
  MakeCallRequest,
  UpdateAssistantRequest,
  UpdateToolRequest,
  UpdateCampaignStatusRequest,
} from './schema/requests.js';

export type { RequestEvent } from './request-executor.js';
export type { ListPage } from './pages.js';
export { ServiceError, isServiceError, type ErrorKind } from './errors.js';

export interface ServiceClientOptions {
  /** The spec's {base_url}; a path prefix is kept. */
  baseUrl: string;
  /** Read for every request, so a reloaded token file takes effect at once. */
  getToken: () => string;
  clock: Clock;
  logger: Logger;
  /** Zone of the service's `YYYY-MM-DD HH:MM:SS` stamps (for callers of parseServiceTime). */
  serverTimezone?: string;
  /** The service's limiter (defaults 100 in any 60 s, 20 in any 10 s); `marginMs`: see rate-budget.ts. */
  rateLimit?: { requestsPerMinute: number; burst: number; burstWindowSeconds?: number; marginMs?: number };
  /** A budget shared with other clients of the same account; overrides `rateLimit`. */
  budget?: RateBudget;
  connectTimeoutMs?: number;
  requestTimeoutMs?: number;
  /** Source of jitter for read backoff, in [0, 1). */
  random?: () => number;
  onRequest?: (e: RequestEvent) => void;
  /** Tries per read (default 5). */
  maxTries?: number;
}

/** The answer of make_call: `callId` when the service named the call (top level or in `data`). */
export interface MakeCallResult {
  message: string;
  callId: string | null;
  /** False only when `beforeSend` withheld the request: nothing reached the service. */
  sent: boolean;
}

/** The answer of update-status (4.6). */
export interface CampaignStatusResult {
  message: string;
  success: boolean;
  campaignId: number | null;
  status: string | null;
}

/** A typed method for each of the 18 endpoints of the spec, plus page iterators. */
export interface ServiceClient {
  readonly serverTimezone: string;
  readonly budget: RateBudget;
  createTool(body: CreateToolRequest): Promise<Tool>;
  updateTool(id: number, body: UpdateToolRequest): Promise<Tool>;
  createLead(body: CreateLeadRequest): Promise<Lead>;
  listLeads(query?: ListLeadsQuery): Promise<ListPage<Lead>>;
  listCampaigns(): Promise<Campaign[]>;
  updateCampaignStatus(body: UpdateCampaignStatusRequest): Promise<CampaignStatusResult>;
  /** Sends make_call once; `beforeSend` is asked right before sending (false → `sent: false`). */
  makeCall(body: MakeCallRequest, opts?: { beforeSend?: () => boolean }): Promise<MakeCallResult>;
  listCalls(query?: Partial<ListCallsQuery>): Promise<ListPage<Call>>;
  createAssistant(body: CreateAssistantRequest): Promise<AssistantSummary>;
  updateAssistant(id: number, body: UpdateAssistantRequest): Promise<AssistantSummary>;
  listAssistants(query?: Partial<ListAssistantsQuery>): Promise<ListPage<Assistant>>;
  listOutboundAssistants(): Promise<OutboundAssistant[]>;
  enableInboundWebhook(body: EnableInboundWebhookRequest): Promise<{ message: string }>;
  disableInboundWebhook(assistantId: number): Promise<{ message: string }>;
  disableWebhook(assistantId: number): Promise<{ message: string }>;
  listPhoneNumbers(query?: ListPhoneNumbersQuery): Promise<PhoneNumber[]>;
  listVoices(query?: ListVoicesQuery): Promise<Voice[]>;
  listModels(): Promise<LlmModel[]>;
  /** Every call matching the filters, page after page (from `query.page`, default 1). */
  iterateCalls(query?: Partial<ListCallsQuery>): AsyncIterable<Call>;
  /** Every assistant of the caller, page after page. */
  iterateAssistants(query?: Partial<ListAssistantsQuery>): AsyncIterable<Assistant>;
  /** Every lead matching the filters; one pass when the service answers with a plain array. */
  iterateLeads(query?: ListLeadsQuery): AsyncIterable<Lead>;
  /** Releases sockets and rejects requests still waiting for the budget. */
  close(): Promise<void>;
}

/** Creates the client; nothing is sent until a method is called. */
export function createServiceClient(opts: ServiceClientOptions): ServiceClient {
  const logger = opts.logger.child({ component: 'service-client' });
  const transport = createHttpTransport({
    baseUrl: opts.baseUrl,
    connectTimeoutMs: opts.connectTimeoutMs ?? 10_000,
    requestTimeoutMs: opts.requestTimeoutMs ?? 30_000,
  });
  const ownBudget = opts.budget === undefined;
  const budget =
    opts.budget ??
    createRateBudget({
      clock: opts.clock,
      requestsPerMinute: opts.rateLimit?.requestsPerMinute ?? 100,
      burst: opts.rateLimit?.burst ?? 20,
      burstWindowSeconds: opts.rateLimit?.burstWindowSeconds ?? 10,
      ...(opts.rateLimit?.marginMs !== undefined ? { marginMs: opts.rateLimit.marginMs } : {}),
    });
  const execute = createExecutor({
    transport,
    budget,
    clock: opts.clock,
    logger,
    getToken: opts.getToken,
    random: opts.random ?? Math.random,
    ...(opts.onRequest ? { onRequest: opts.onRequest } : {}),
    ...(opts.maxTries !== undefined ? { maxTries: opts.maxTries } : {}),
  });

  const get = <T>(endpoint: string, path: string, parse: (json: unknown) => T): Promise<T> =>
    execute({ endpoint, method: 'GET', path, parse });
  const send = <T>(endpoint: string, method: 'POST' | 'PUT', path: string, body: unknown, parse: (json: unknown) => T) =>
    execute({ endpoint, method, path, body, parse });

  const list = <T>(endpoint: string, path: string, item: Parameters<typeof parseListAnswer>[1], page: number) =>
    get(endpoint, path, (json) => {
      const p = parseListAnswer(json, item, page) as ListPage<T>;
      if (p.skipped > 0) logger.warn({ endpoint, skipped: p.skipped }, 'records of unexpected shape left out');
      return p;
    });
  const array = async <T>(endpoint: string, path: string, item: Parameters<typeof parseListAnswer>[1]) =>
    (await list<T>(endpoint, path, item, 1)).items;

  const client: ServiceClient = {
    serverTimezone: opts.serverTimezone ?? 'UTC',
    budget,
    createTool: (body) => send('create_tool', 'POST', '/api/user/tools', body, (j) => toolSchema.parse(data(j))),
    updateTool: async (id, body) =>
      send('update_tool', 'PUT', `/api/user/tools/${pathId(id)}`, body, (j) => toolSchema.parse(data(j))),
    createLead: (body) => send('create_lead', 'POST', '/api/user/lead', body, (j) => leadSchema.parse(data(j))),
    listLeads: (query = {}) => list<Lead>('list_leads', `/api/user/leads${qs(query)}`, leadSchema, query.page ?? 1),
    listCampaigns: () => array<Campaign>('list_campaigns', '/api/user/campaigns', campaignSchema),
    updateCampaignStatus: (body) =>
      send('update_campaign_status', 'POST', '/api/user/campaigns/update-status', body, (j) => {
        const d = campaignStatusResultSchema.parse(data(j));
        const rec = isRecord(j) ? j : {};
        return {
          message: messageOf(j),
          success: rec['success'] === undefined ? true : rec['success'] === true || rec['success'] === 1,
          campaignId: d.campaign_id,
          status: d.status,
        };
      }),
    makeCall: async (body, callOpts) => {
      try {
        return await execute({
          endpoint: 'make_call',
          method: 'POST',
          path: '/api/user/make_call',
          body,
          parse: readMakeCall,
          placesCall: true,
          ...(callOpts?.beforeSend ? { beforeSend: callOpts.beforeSend } : {}),
        });
      } catch (err) {
        if (err instanceof RequestWithheldError) return { message: 'not sent', callId: null, sent: false };
        throw err;
      }
    },
    listCalls: (query = {}) => list<Call>('list_calls', `/api/user/calls${qs(query)}`, callSchema, query.page ?? 1),
    createAssistant: (body) =>
      send('create_assistant', 'POST', '/api/user/assistant', body, (j) => assistantSummarySchema.parse(data(j))),
    updateAssistant: async (id, body) =>
      send('update_assistant', 'PUT', `/api/user/assistant/${pathId(id)}`, body, (j) =>
        assistantSummarySchema.parse(data(j)),
      ),
    listAssistants: (query = {}) =>
      list<Assistant>('list_assistants', `/api/user/assistants/get${qs(query)}`, assistantSchema, query.page ?? 1),
    listOutboundAssistants: () =>
      array<OutboundAssistant>('list_outbound_assistants', '/api/user/assistants/outbound', outboundAssistantSchema),
    enableInboundWebhook: (body) =>
      send('enable_inbound_webhook', 'POST', '/api/user/assistants/enable-inbound-webhook', body, messageOnly),
    disableInboundWebhook: (assistantId) =>
      send('disable_inbound_webhook', 'POST', '/api/user/assistants/disable-inbound-webhook', { assistant_id: assistantId }, messageOnly),
    disableWebhook: (assistantId) =>
      send('disable_webhook', 'POST', '/api/user/assistants/disable-webhook', { assistant_id: assistantId }, messageOnly),
    listPhoneNumbers: (query = {}) =>
      array<PhoneNumber>('list_phone_numbers', `/api/user/assistants/phone-numbers${qs(query)}`, phoneNumberSchema),
    listVoices: (query = {}) => array<Voice>('list_voices', `/api/user/assistants/voices${qs(query)}`, voiceSchema),
    listModels: () => array<LlmModel>('list_models', '/api/user/assistants/models', llmModelSchema),
    iterateCalls: (query = {}) => iteratePages((page) => client.listCalls({ ...query, page }), query.page ?? 1),
    iterateAssistants: (query = {}) =>
      iteratePages((page) => client.listAssistants({ ...query, page }), query.page ?? 1),
    iterateLeads: (query = {}) => iteratePages((page) => client.listLeads({ ...query, page }), query.page ?? 1),
    async close() {
      if (ownBudget) budget.close();
      await transport.close();
    },
  };
  return client;
}

/**
 * Reads a 2xx make_call answer. It never throws: a 2xx means the call was placed, so
 * an odd body must not turn a placement into a failure. `call_id` is taken from the
 * top level (public docs) or from `data` (`call_id` or `id`) when present.
 */
export function readMakeCall(json: unknown): MakeCallResult {
  const rec = isRecord(json) ? json : {};
  const inner = isRecord(rec['data']) ? rec['data'] : {};
  const id = idText(rec['call_id']) ?? idText(inner['call_id']) ?? idText(inner['id']);
  return { message: typeof rec['message'] === 'string' ? rec['message'] : '', callId: id, sent: true };
}

function idText(v: unknown): string | null {
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  if (typeof v === 'string' && v.trim() !== '') return v.trim();
  return null;
}

/** `data` of a `{message, data}` answer; the answer itself when it has no `data`. */
function data(json: unknown): unknown {
  return isRecord(json) && 'data' in json ? json['data'] : json;
}

function messageOf(json: unknown): string {
  return isRecord(json) && typeof json['message'] === 'string' ? json['message'] : '';
}

function messageOnly(json: unknown): { message: string } {
  if (!isRecord(json)) throw new TypeError('answer is not an object');
  return { message: messageOf(json) };
}

/** A record id for a path segment; rejects anything but a non-negative integer. */
function pathId(id: number): string {
  if (!Number.isSafeInteger(id) || id < 0) throw new TypeError(`invalid record id: ${String(id)}`);
  return String(id);
}

/** Query string from defined values (`?a=1&b=x`), empty when none. */
function qs(query: Record<string, unknown>): string {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null) p.append(k, String(v));
  const s = p.toString();
  return s ? `?${s}` : '';
}
