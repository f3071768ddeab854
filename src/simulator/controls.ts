import { ANSWERED_BY, E164_PATTERN, FINAL_CALL_STATUSES } from '../service/schema/constants.js';
import type { Faults } from './faults.js';
import { isScenarioChoice, SCENARIO_NAMES } from './conversations.js';
import { isObject, json, type RouteResult } from './http-util.js';
import { callRecord } from './records.js';
import type { SimState } from './state.js';
import type { FixedOutcome, SimCall } from './types.js';

// Test controls under /__sim/ (loopback only, no bearer). Never reachable under /api/user.

/** Everything /__sim/ needs. */
export interface ControlDeps {
  state: SimState;
  faults: Faults;
}

/** Answers a /__sim/ request, or null for an unknown control. */
export function handleControl(deps: ControlDeps, method: string, path: string, body: unknown): RouteResult | null {
  const { state, faults } = deps;
  const key = `${method} ${path}`;
  switch (key) {
    case 'GET /__sim/calls':
      return json(200, { calls: [...state.calls.values()].sort((a, b) => a.id - b.id).map((c) => simCall(state, c)) });
    case 'GET /__sim/stats':
      // Limiter trips are refusals by the limiter itself; injected 429s are counted apart.
      return json(200, { rate_limit: { ...state.rateLimitStats } });
    case 'GET /__sim/stats/users':
      // The same per token (user_index): one token's limiter can trip while another's does not.
      return json(200, {
        rate_limit_by_user: state.users.map((u) => ({ user_index: u.index, ...(state.rateLimitStatsByUser.get(u.index) ?? { allowed: 0, trips: 0, refused: 0, injected: 0 }) })),
      });
    case 'GET /__sim/webhooks':
      return json(200, { deliveries: state.webhookDeliveries });
    case 'GET /__sim/faults':
      return json(200, { rules: faults.list() });
    case 'POST /__sim/faults': {
      const rule = faults.add(body);
      return Array.isArray(rule) ? json(400, { message: 'Invalid fault', errors: rule }) : json(200, { rule });
    }
    case 'POST /__sim/reset-faults':
      faults.reset();
      return json(200, { ok: true });
    case 'POST /__sim/outcomes':
      return fixOutcome(state, body);
    case 'POST /__sim/extracted':
      return setExtracted(state, body);
    case 'POST /__sim/conversations':
      return setConversation(state, body);
    case 'GET /__sim/conversations':
      return json(200, { calls: [...state.calls.values()].sort((a, b) => a.id - b.id).map(conversationRecord) });
    case 'POST /__sim/reset-outcomes':
      state.fixedOutcomes.clear();
      state.extractedByNumber.clear();
      state.conversationByNumber.clear();
      return json(200, { ok: true });
    case 'POST /__sim/auth':
      return setTokenValid(state, body);
    default:
      return null;
  }
}

/** A call as the tests see it: the API record plus owner, links, plan and timeline. */
export function simCall(state: SimState, c: SimCall): Record<string, unknown> {
  return {
    ...callRecord(state, c),
    user_index: c.userIndex,
    assistant_id: c.assistantId,
    campaign_id: c.campaignId,
    lead_id: c.leadId,
    input_variables: c.input_variables,
    planned_outcome: c.plan.outcome,
    conversation: c.conversation?.scenario ?? null,
    created_at_ms: c.createdAt,
    finished_at_ms: c.finishedAt,
    timeline: c.timeline.map((t) => ({ status: t.status, at: t.at, at_iso: new Date(t.at).toISOString() })),
  };
}

const FIXABLE = new Set<string>([...FINAL_CALL_STATUSES, 'in-progress']);

function fixOutcome(state: SimState, body: unknown): RouteResult {
  if (!isObject(body)) return json(400, { message: 'body must be a JSON object' });
  const problems: string[] = [];
  const phone = body.phone_number;
  if (typeof phone !== 'string' || !E164_PATTERN.test(phone)) problems.push('phone_number must be E.164');
  const status = body.status;
  if (typeof status !== 'string' || !FIXABLE.has(status)) problems.push(`status must be one of ${[...FIXABLE].join(', ')}`);
  const answeredBy = body.answered_by ?? null;
  if (answeredBy !== null && !(ANSWERED_BY as readonly unknown[]).includes(answeredBy)) problems.push('answered_by must be human, machine, unknown or null');
  const duration = body.duration ?? null;
  if (duration !== null && (typeof duration !== 'number' || duration < 0)) problems.push('duration must be a number ≥ 0');
  const count = body.count ?? null;
  if (count !== null && (typeof count !== 'number' || !Number.isInteger(count) || count < 1)) problems.push('count must be an integer ≥ 1');
  if (problems.length > 0) return json(400, { message: 'Invalid outcome', errors: problems });
  const fixed: FixedOutcome = {
    status: status as string,
    answered_by: answeredBy as FixedOutcome['answered_by'],
    duration: duration as number | null,
    remaining: count === null ? Number.POSITIVE_INFINITY : (count as number),
  };
  const list = state.fixedOutcomes.get(phone as string) ?? [];
  list.push(fixed);
  state.fixedOutcomes.set(phone as string, list);
  return json(200, { ok: true, phone_number: phone, queued: list.length });
}

// What the assistant "heard" on every connected call to one number (or the next `count`), so
// tests and the demo can drive rules that read extracted variables; an empty mapping removes the setting.
function setExtracted(state: SimState, body: unknown): RouteResult {
  if (!isObject(body)) return json(400, { message: 'body must be a JSON object' });
  const phone = body.phone_number;
  const variables = body.variables;
  const count = body.count ?? null;
  if (typeof phone !== 'string' || !E164_PATTERN.test(phone) || !isObject(variables) || (count !== null && !(typeof count === 'number' && Number.isInteger(count) && count >= 1))) {
    return json(400, { message: 'body must be {phone_number: E.164, variables: {NAME: value}, count?: integer ≥ 1}' });
  }
  if (Object.keys(variables).length === 0) state.extractedByNumber.delete(phone);
  else state.extractedByNumber.set(phone, { variables: { ...variables }, remaining: count === null ? Number.POSITIVE_INFINITY : (count as number) });
  return json(200, { ok: true, phone_number: phone, variables });
}

/**
 * One call as a judge of campaignd's decisions needs it: the number, when it was placed and
 * ended (ms), what make_call was given, what the assistant extracted, what the call cost, and
 * the conversation played (null: none, or nobody answered).
 */
export function conversationRecord(c: SimCall): Record<string, unknown> {
  return {
    call_id: c.id,
    phone_number: c.client_phone_number,
    placed_at_ms: c.createdAt,
    ended_at_ms: c.finishedAt,
    status: c.status,
    answered_by: c.answered_by,
    input_variables: c.input_variables,
    extracted_variables: c.variables,
    total_cost: c.total_cost,
    scenario: c.finishedAt !== null && c.conversation && c.answered_by === 'human' ? c.conversation.scenario : null,
  };
}

// The conversation every answered call to one number plays (a scenario or `mix`); `null` removes it.
function setConversation(state: SimState, body: unknown): RouteResult {
  const usage = `body must be {phone_number: E.164, scenario: ${SCENARIO_NAMES.join(' | ')} | mix | null}`;
  if (!isObject(body)) return json(400, { message: usage });
  const phone = body.phone_number;
  const scenario = body.scenario;
  if (typeof phone !== 'string' || !E164_PATTERN.test(phone) || !(scenario === null || isScenarioChoice(scenario))) return json(400, { message: usage });
  if (scenario === null) state.conversationByNumber.delete(phone);
  else state.conversationByNumber.set(phone, scenario);
  return json(200, { ok: true, phone_number: phone, scenario });
}

function setTokenValid(state: SimState, body: unknown): RouteResult {
  if (!isObject(body) || typeof body.valid !== 'boolean' || typeof body.user_index !== 'number') {
    return json(400, { message: 'body must be {user_index: number, valid: boolean}' });
  }
  const user = state.users[body.user_index];
  if (!user) return json(404, { message: 'no such user' });
  user.tokenValid = body.valid;
  return json(200, { ok: true, user_index: user.index, valid: user.tokenValid });
}
