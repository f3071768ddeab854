import type { LifecycleDeps } from './lifecycle-deps.js';
import type { Handler } from './http-util.js';
import {
  createAssistant,
  disableInboundWebhook,
  disableWebhook,
  enableInboundWebhook,
  listAssistants,
  listOutboundAssistants,
  updateAssistant,
} from './routes-assistants.js';
import { listCalls, makeCall } from './routes-calls.js';
import { createLead, listCampaigns, listLeads, updateCampaignStatus } from './routes-leads.js';
import { listModels, listPhoneNumbers, listVoices } from './routes-lookups.js';
import { createTool, updateTool } from './routes-tools.js';

/** One endpoint of spec section 4; `:id` segments become params. */
export interface Route {
  method: string;
  pattern: string;
  handler: Handler;
}

export interface RouteSettings {
  lifecycle: LifecycleDeps;
  callIdInResponse: boolean;
  toolLimit: number;
  leadsPaginated: boolean;
}

/** The 18 endpoints of spec section 4. */
export function buildRoutes(s: RouteSettings): Route[] {
  return [
    { method: 'POST', pattern: '/api/user/tools', handler: createTool(s.toolLimit) },
    { method: 'PUT', pattern: '/api/user/tools/:id', handler: updateTool },
    { method: 'POST', pattern: '/api/user/lead', handler: createLead },
    { method: 'GET', pattern: '/api/user/leads', handler: listLeads(s.leadsPaginated) },
    { method: 'GET', pattern: '/api/user/campaigns', handler: listCampaigns },
    { method: 'POST', pattern: '/api/user/campaigns/update-status', handler: updateCampaignStatus },
    { method: 'POST', pattern: '/api/user/make_call', handler: makeCall(s.lifecycle, s.callIdInResponse) },
    { method: 'GET', pattern: '/api/user/calls', handler: listCalls },
    { method: 'POST', pattern: '/api/user/assistant', handler: createAssistant },
    { method: 'PUT', pattern: '/api/user/assistant/:id', handler: updateAssistant },
    { method: 'GET', pattern: '/api/user/assistants/get', handler: listAssistants },
    { method: 'GET', pattern: '/api/user/assistants/outbound', handler: listOutboundAssistants },
    { method: 'POST', pattern: '/api/user/assistants/enable-inbound-webhook', handler: enableInboundWebhook },
    { method: 'POST', pattern: '/api/user/assistants/disable-inbound-webhook', handler: disableInboundWebhook },
    { method: 'POST', pattern: '/api/user/assistants/disable-webhook', handler: disableWebhook },
    { method: 'GET', pattern: '/api/user/assistants/phone-numbers', handler: listPhoneNumbers },
    { method: 'GET', pattern: '/api/user/assistants/voices', handler: listVoices },
    { method: 'GET', pattern: '/api/user/assistants/models', handler: listModels },
  ];
}

/** The route and params for a request; `methodMismatch` when only the method is wrong. */
export function matchRoute(
  routes: Route[],
  method: string,
  path: string,
): { route: Route; params: Record<string, string> } | { methodMismatch: boolean } {
  const parts = path.replace(/\/+$/, '').split('/');
  let pathMatched = false;
  for (const route of routes) {
    const pat = route.pattern.split('/');
    if (pat.length !== parts.length) continue;
    const params: Record<string, string> = {};
    let ok = true;
    for (let i = 0; i < pat.length && ok; i++) {
      const p = pat[i] ?? '';
      const v = parts[i] ?? '';
      if (p.startsWith(':')) {
        // Path ids are integers (spec 4.2, 4.10); anything else matches no route.
        if (/^\d+$/.test(v)) params[p.slice(1)] = v;
        else ok = false;
      } else if (p !== v) ok = false;
    }
    if (!ok) continue;
    pathMatched = true;
    if (route.method === method) return { route, params };
  }
  return { methodMismatch: pathMatched };
}
