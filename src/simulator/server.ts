import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { silentLogger } from '../log/logger.js';
import type { LifecycleDeps } from './lifecycle-deps.js';
import { outcomeShares } from './call-plan.js';
import { handleControl } from './controls.js';
import { scenarioMix } from './conversations.js';
import { Faults } from './faults.js';
import { BodyTooLarge, isLoopback, json, message, readBody, writeResult, type RouteResult } from './http-util.js';
import { RateLimiter } from './rate-limit.js';
import { buildRoutes, matchRoute } from './routes.js';
import { seedCatalog, seedUser } from './seed.js';
import { SimState } from './state.js';
import type { SimulatorOptions, SimUser } from './types.js';

export type { SimulatorOptions, OutcomeName } from './types.js';
export { SimState } from './state.js';

/** A running simulator. */
export interface RunningSimulator {
  url: string;
  port: number;
  /** The users' tokens, in user order (index 0 first). */
  tokens: string[];
  state: SimState;
  close(): Promise<void>;
}

/**
 * Starts the spec-faithful Voice Assistant Calling Service simulator on `host:port`
 * (default 127.0.0.1, a free port). Time, call progress and rate limits follow
 * `opts.clock`; outcomes and faults are reproducible from `opts.seed`.
 */
export async function startSimulator(opts: SimulatorOptions): Promise<RunningSimulator> {
  const host = opts.host ?? '127.0.0.1';
  const clock = opts.clock;
  const networkClock = opts.networkClock ?? clock;
  const logger = opts.logger ?? silentLogger();
  const seed = opts.seed ?? 1;
  const tokens = opts.tokens && opts.tokens.length > 0 ? [...opts.tokens] : [randomBytes(16).toString('hex')];
  if (new Set(tokens).size !== tokens.length) throw new RangeError('simulator tokens must be distinct');

  const state = new SimState();
  seedCatalog(state);
  for (const token of tokens) seedUser(state, token, clock.now());

  let origin = `http://${host}`;
  const lifecycle: LifecycleDeps = {
    state,
    clock,
    networkClock,
    plan: {
      seed,
      shares: outcomeShares(opts.outcomes),
      talkSeconds: opts.callDurationSeconds ?? { min: 30, max: 180 },
    },
    conversations: { seed, choice: opts.conversations, mix: scenarioMix(opts.conversationMix) },
    origin: () => origin,
    webhookTimeoutMs: opts.webhookTimeoutMs ?? 10_000,
    logger,
  };
  const routes = buildRoutes({
    lifecycle,
    callIdInResponse: opts.callIdInResponse ?? false,
    toolLimit: opts.toolLimit ?? 5,
    leadsPaginated: opts.leadsPaginated ?? false,
  });
  const faults = new Faults(seed);
  const limiter = opts.rateLimit ? new RateLimiter(opts.rateLimit, state.rateLimitStats, state.rateLimitStatsByUser) : null;
  const badTokenAnswer = opts.badTokenAnswer ?? 'json401';

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://sim.invalid');
    const method = req.method ?? 'GET';
    const path = url.pathname;
    const reqOrigin = req.headers.host ? `http://${req.headers.host}` : origin;

    if (path.startsWith('/__sim/')) {
      if (!isLoopback(req.socket.remoteAddress)) return writeResult(res, message(403, 'test controls are loopback only'));
      const body = await readJson(req);
      if (body === INVALID) return writeResult(res, message(400, 'Malformed JSON body'));
      return writeResult(res, handleControl({ state, faults }, method, path, body) ?? message(404, 'Unknown control'));
    }
    if (path.startsWith('/recordings/')) {
      res.writeHead(200, { 'content-type': 'audio/mpeg', 'content-length': 0 });
      return void res.end();
    }
    if (!path.startsWith('/api/user/')) return writeResult(res, message(404, 'Not Found'));

    const fault = faults.decide(path);
    if (fault.latencyMs > 0) await networkClock.sleep(fault.latencyMs);

    const user = authenticate(req);
    if (!user) return rejectToken(res, reqOrigin);

    const extraHeaders: Record<string, string> = {};
    if (limiter) {
      const v = limiter.check(user.index, clock.now());
      extraHeaders['X-RateLimit-Limit'] = String(v.limit);
      extraHeaders['X-RateLimit-Remaining'] = String(v.remaining);
      extraHeaders['X-RateLimit-Reset'] = String(v.resetAt);
      if (!v.allowed) return writeResult(res, tooManyRequests(v.retryAfter, extraHeaders));
    }
    if (fault.rateLimited) {
      state.rateLimitStats.injected++;
      // The injected refusal names its own wait; the headers say the same.
      const reset = String(Math.ceil(clock.now() / 1000) + fault.rateLimited.retryAfter);
      return writeResult(res, tooManyRequests(fault.rateLimited.retryAfter, { ...extraHeaders, 'X-RateLimit-Reset': reset }));
    }
    if (fault.serverStatus !== null) return writeResult(res, json(fault.serverStatus, { message: serverErrorMessage(method, path) }, extraHeaders));

    const match = matchRoute(routes, method, path);
    if (!('route' in match)) {
      return writeResult(res, match.methodMismatch ? message(405, 'Method Not Allowed') : message(404, 'Not Found'));
    }
    const body = method === 'GET' ? {} : await readJson(req);
    if (body === INVALID) return writeResult(res, message(400, 'Malformed JSON body'));
    if (fault.insufficientBalance && path === '/api/user/make_call') {
      return writeResult(res, message(422, 'Insufficient balance'));
    }
    let result: RouteResult;
    try {
      result = await match.route.handler({ req, res, user, state, clock, url, origin: reqOrigin, params: match.params, body, logger });
    } catch (err) {
      logger.error({ err, method, path }, 'simulator handler failed');
      result = json(500, { message: serverErrorMessage(method, path) });
    }
    if (result.createdCall && fault.dropAfterCreate) {
      // The call exists now; the client must not learn it (rule 6, docs/design.md §3.6).
      req.socket.destroy();
      return;
    }
    writeResult(res, { ...result, headers: { ...extraHeaders, ...result.headers } });
  }

  function authenticate(req: IncomingMessage): SimUser | undefined {
    const header = req.headers.authorization ?? '';
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
    return m?.[1] ? state.userByToken(m[1]) : undefined;
  }

  function rejectToken(res: ServerResponse, reqOrigin: string): void {
    if (badTokenAnswer === 'redirect302') {
      const html = '<!doctype html><html><body>Redirecting to login</body></html>';
      res.writeHead(302, { location: `${reqOrigin}/login`, 'content-type': 'text/html; charset=utf-8', 'content-length': Buffer.byteLength(html) });
      return void res.end(html);
    }
    writeResult(res, json(401, { error: 'Invalid API key', message: 'The API key is missing or invalid.' }));
  }

  const server = createServer((req, res) => {
    const started = networkClock.now();
    // Method, path and status only: the Authorization header never reaches the logs.
    res.once('finish', () =>
      logger.debug({ method: req.method, path: req.url?.split('?')[0], status: res.statusCode, ms: networkClock.now() - started }, 'request'),
    );
    handle(req, res).catch((err: unknown) => {
      if (err instanceof BodyTooLarge) {
        if (!res.headersSent) writeResult(res, message(413, 'Payload Too Large'));
        return;
      }
      logger.error({ err }, 'simulator request failed');
      if (!res.headersSent) writeResult(res, message(500, 'Server Error'));
      else res.destroy();
    });
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  origin = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  logger.info({ url: origin, users: tokens.length }, 'simulator listening');

  return {
    url: origin,
    port,
    tokens,
    state,
    async close() {
      state.stop();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await state.settled();
    },
  };
}

const INVALID = Symbol('invalid-json');

async function readJson(req: IncomingMessage): Promise<unknown> {
  const text = await readBody(req);
  if (text.trim() === '') return {};
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return INVALID;
  }
}

function tooManyRequests(retryAfter: number, headers: Record<string, string>): RouteResult {
  return json(
    429,
    { error: 'Rate limit exceeded', message: 'Too many requests. Please try again later.', retry_after: retryAfter },
    { ...headers, 'Retry-After': String(retryAfter), 'X-RateLimit-Remaining': '0' },
  );
}

/** The 500 bodies the spec names for assistant create/update; a generic one elsewhere. */
function serverErrorMessage(method: string, path: string): string {
  if (method === 'POST' && path === '/api/user/assistant') return 'Assistant creation failed';
  if (method === 'PUT' && path.startsWith('/api/user/assistant/')) return 'Assistant update failed';
  return 'Server Error';
}
