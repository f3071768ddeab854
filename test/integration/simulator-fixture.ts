import { silentLogger } from '../../src/log/logger.js';
import { ServiceError, createServiceClient, type ServiceClient } from '../../src/service/client.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/server.js';
import type { SimulatorOptions } from '../../src/simulator/types.js';
import { ManualClock, systemClock } from '../../src/time/clock.js';

/** An answer of the simulator, read whole. */
export interface Answer {
  status: number;
  body: any;
  headers: Headers;
}

/** A tiny HTTP helper bound to one token (or none). */
export interface Api {
  get(path: string): Promise<Answer>;
  post(path: string, body?: unknown): Promise<Answer>;
  put(path: string, body?: unknown): Promise<Answer>;
}

/** Starts a simulator on a ManualClock with two users, `tok-a` and `tok-b`. */
export async function startTestSim(
  opts: Partial<SimulatorOptions> = {},
): Promise<{ sim: RunningSimulator; clock: ManualClock; a: Api; b: Api; anon: Api; controls: Api }> {
  const clock = (opts.clock as ManualClock | undefined) ?? new ManualClock();
  // Network waits (webhook timeouts, fault latency) are real; only the calls' time is manual.
  const sim = await startSimulator({ tokens: ['tok-a', 'tok-b'], seed: 7, networkClock: systemClock, ...opts, clock });
  return {
    sim,
    clock,
    a: api(sim.url, 'tok-a'),
    b: api(sim.url, 'tok-b'),
    anon: api(sim.url, null),
    controls: api(sim.url, null),
  };
}

/** A helper that sends JSON with `Authorization: Bearer token` (when given). */
export function api(base: string, token: string | null): Api {
  async function send(method: string, path: string, body?: unknown): Promise<Answer> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (token) headers.authorization = `Bearer ${token}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`${base}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      redirect: 'manual',
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // keep text
    }
    return { status: res.status, body: parsed, headers: res.headers };
  }
  return {
    get: (p) => send('GET', p),
    post: (p, b) => send('POST', p, b ?? {}),
    put: (p, b) => send('PUT', p, b ?? {}),
  };
}

/** The id of the user's seeded outbound assistant. */
export async function outboundAssistantId(a: Api): Promise<number> {
  const res = await a.get('/api/user/assistants/outbound');
  return res.body[0].id as number;
}

/** The service client of src/service against a simulator, with a budget that never blocks and no retries. */
export function clientFor(url: string, token: string): ServiceClient {
  return createServiceClient({
    baseUrl: url,
    getToken: () => token,
    clock: systemClock,
    logger: silentLogger(),
    rateLimit: { requestsPerMinute: 1_000_000, burst: 10_000 },
    maxTries: 1,
    requestTimeoutMs: 5_000,
  });
}

/** The ServiceError a promise rejects with (fails the test if it resolves or throws something else). */
export async function failure(p: Promise<unknown>): Promise<ServiceError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof ServiceError) return err;
    throw err;
  }
  throw new Error('expected a ServiceError, but the request succeeded');
}
