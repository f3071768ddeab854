// The black-box fake service (fake-service.mjs) as a child process, with typed access to
// its control interface (its own port, never /api/user): its record of every call, its
// counters, fault plans and the accepted token.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RecordedCall } from '../e2e/daemon-fixture.js';
import { spawnNode, type Proc } from '../helpers/processes.js';

export const FAKE_SCRIPT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fake-service.mjs');

/** The zone the fake writes its zone-less timestamps in unless told otherwise. */
export const FAKE_DEFAULT_ZONE = 'Pacific/Pago_Pago';
/** The fake's outbound assistant unless told otherwise. */
export const FAKE_DEFAULT_ASSISTANT = 42;

/** One rule of a wave (see fake/faults.mjs for the meaning of each field). */
export interface FakeFaultRule {
  path?: string;
  latency_ms?: number | [number, number];
  reset?: number;
  rate_limited_header?: number;
  rate_limited_body?: number;
  retry_after?: number;
  server_error?: number;
  server_status?: number;
  html?: boolean;
  drop_after_create?: number;
  /** The rule answers at most this many requests, then stands aside. */
  times?: number;
}

/** A wave: its rules hold for `duration_ms` (forever without), then the next wave's. */
export interface FakeWave {
  duration_ms?: number;
  rules: FakeFaultRule[];
}

/** A call as the fake's GET /calls shows it. */
export interface FakeCallJson {
  id: string;
  assistant_id: string;
  client_phone_number: string;
  status: string;
  answered_by: 'human' | 'machine' | 'unknown' | null;
  created_at_ms: number;
  finished_at_ms: number | null;
  planned_outcome: string;
  answer_dropped: boolean;
  webhook: unknown;
  timeline: { status: string; at_ms: number }[];
}

/** The fake's counters (GET /stats). */
export interface FakeStats {
  requests: number;
  by_route: Record<string, Record<string, number>>;
  /** 429s the fake's own rate limiter had to send (injected 429s are not counted here). */
  rate_limited: number;
  redirects: number;
  /** GET /login: only a client that follows the redirect of a bad token comes here. */
  login_page_views: number;
  /** Call-list requests by the page asked for ("1", "2", …). */
  call_list_pages: Record<string, number>;
  webhooks: { sent: number; ok: number; refused: number; failed: number };
  injected: { reset: number; rate_limited_header: number; rate_limited_body: number; server_error: number; latency: number; drop_after_create: number };
}

export interface FakeOptions {
  token: string;
  seed?: number;
  serverTimezone?: string;
  assistantId?: number;
  callId?: boolean;
  /** "100/min" (the live service's, with 20 per 10 s) or "off". */
  rateLimit?: string;
  outcomes?: string;
  ringMs?: string;
  talkMs?: string;
  maxPerPage?: number;
  listOrder?: 'page-shuffled' | 'newest';
}

/** A running fake service. */
export interface FakeService {
  proc: Proc;
  url: string;
  controlUrl: string;
  serverTimezone: string;
  assistantId: number;
  calls(): Promise<FakeCallJson[]>;
  stats(): Promise<FakeStats>;
  setWaves(waves: FakeWave[]): Promise<void>;
  clearFaults(): Promise<void>;
  setToken(token: string): Promise<void>;
}

/** Starts the fake and waits for its "listening" line. */
export async function startFake(opts: FakeOptions): Promise<FakeService> {
  const serverTimezone = opts.serverTimezone ?? FAKE_DEFAULT_ZONE;
  const assistantId = opts.assistantId ?? FAKE_DEFAULT_ASSISTANT;
  const args = ['--token', opts.token, '--seed', String(opts.seed ?? 1), '--server-timezone', serverTimezone, '--assistant-id', String(assistantId)];
  if (opts.callId) args.push('--call-id');
  if (opts.rateLimit) args.push('--rate-limit', opts.rateLimit);
  if (opts.outcomes) args.push('--outcomes', opts.outcomes);
  if (opts.ringMs) args.push('--ring-ms', opts.ringMs);
  if (opts.talkMs) args.push('--talk-ms', opts.talkMs);
  if (opts.maxPerPage) args.push('--max-per-page', String(opts.maxPerPage));
  if (opts.listOrder) args.push('--list-order', opts.listOrder);
  const proc = spawnNode('fake-service', FAKE_SCRIPT, args);
  const line = await proc.waitForLine(/^fake-service listening on /);
  const [, url, controlUrl] = /listening on (http:\/\/\S+) control (http:\/\/\S+)/.exec(line)!;
  const get = async <T>(p: string): Promise<T> => (await (await fetch(`${controlUrl}${p}`)).json()) as T;
  const post = async (p: string, body: unknown): Promise<void> => {
    const res = await fetch(`${controlUrl}${p}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    if (res.status !== 200) throw new Error(`fake control ${p} answered ${res.status}: ${await res.text()}`);
  };
  return {
    proc,
    url: url!,
    controlUrl: controlUrl!,
    serverTimezone,
    assistantId,
    calls: async () => (await get<{ calls: FakeCallJson[] }>('/calls')).calls,
    stats: () => get<FakeStats>('/stats'),
    setWaves: (waves) => post('/faults', { waves }),
    clearFaults: () => post('/faults/reset', {}),
    setToken: (token) => post('/token', { token }),
  };
}

/** The fake's calls in the shape the rule checks read (its ids are numeric strings). */
export function recordedFromFake(calls: readonly FakeCallJson[]): RecordedCall[] {
  return calls.map((c) => ({
    id: Number(c.id),
    client_phone_number: c.client_phone_number,
    status: c.status,
    answered_by: c.answered_by,
    created_at_ms: c.created_at_ms,
    finished_at_ms: c.finished_at_ms,
  }));
}

/** Points the fake's assistant webhook at `webhookUrl` through the API itself (PUT /api/user/assistant/{id}). */
export async function setFakeWebhook(fake: FakeService, token: string, webhookUrl: string): Promise<void> {
  const res = await fetch(`${fake.url}/api/user/assistant/${fake.assistantId}`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ is_webhook_active: true, webhook_url: webhookUrl }),
  });
  if (res.status !== 200) throw new Error(`setting the webhook answered ${res.status}: ${await res.text()}`);
}
