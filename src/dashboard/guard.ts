import crypto from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Kysely } from 'kysely';
import { secretMatches } from '../http/secret.js';
import { isLoopback } from '../config/start-checks.js';
import type { Database } from '../store/types.js';
import type { Clock } from '../time/clock.js';
import { createSessions } from './sessions.js';

// Who may read the dashboard and act on it.
//  - With a token (http.dashboard_token_env), the page asks for it once and starts a
//    session kept in the store (src/dashboard/sessions.ts): the cookie holds the session's
//    random id, never the token, HttpOnly and SameSite=Strict. A session ends at sign-out
//    (on every instance) or after 12 h without a request.
//  - Every POST must come from the daemon's own origin: its Origin header, or its Referer
//    when a browser sends no Origin, names this host; a request with neither is refused.
//    Actions must also carry the CSRF token printed in the page (derived from the token).
//  - Without a token (loopback only: see config/start-checks.ts) the key is random per process,
//    so the CSRF check still holds.

export const SESSION_COOKIE = 'campaignd_dashboard';

export interface Guard {
  /** Whether a token must be given (a token is configured). */
  readonly tokenRequired: boolean;
  /** Whether `token` is the configured token (constant time). */
  tokenMatches(token: string): boolean;
  /** Whether the request carries a live session (always true without a token); extends it. */
  authorised(req: IncomingMessage): Promise<boolean>;
  /** Starts a session: the Set-Cookie header value that carries it. */
  startSession(): Promise<string>;
  /** Ends the request's session in the store: the Set-Cookie header value that clears the cookie. */
  endSession(req: IncomingMessage): Promise<string>;
  /** The CSRF token the page embeds in its forms. */
  readonly csrfToken: string;
  /** Why an action request fails the origin or CSRF check, or null when it passes. */
  csrfProblem(req: IncomingMessage, given: string | undefined): string | null;
}

export interface GuardOptions {
  /** The dashboard token; undefined: none (loopback only). */
  token: string | undefined;
  /** Where sessions are kept (shared by every instance on the database). */
  db: Kysely<Database>;
  clock: Clock;
  /** How long an unused session lives; default 12 h. */
  sessionTtlMs?: number;
  randomKey?: Buffer;
}

export function createGuard(opts: GuardOptions): Guard {
  const { token } = opts;
  const key = token ? Buffer.from(token, 'utf8') : (opts.randomKey ?? crypto.randomBytes(32));
  const csrfToken = crypto.createHmac('sha256', key).update('campaignd-dashboard:csrf').digest('base64url');
  const sessions = token ? createSessions({ token, db: opts.db, clock: opts.clock, ...(opts.sessionTtlMs !== undefined ? { ttlMs: opts.sessionTtlMs } : {}) }) : null;
  const cookieAttrs = 'Path=/; HttpOnly; SameSite=Strict';
  return {
    tokenRequired: token !== undefined,
    tokenMatches: (given) => token !== undefined && secretMatches(given, token),
    authorised: async (req) => sessions === null || (await sessions.check(readCookie(req, SESSION_COOKIE))),
    async startSession() {
      if (!sessions) throw new Error('no dashboard token: there are no sessions to start');
      return `${SESSION_COOKIE}=${await sessions.start()}; ${cookieAttrs}`;
    },
    async endSession(req) {
      await sessions?.end(readCookie(req, SESSION_COOKIE));
      return `${SESSION_COOKIE}=; ${cookieAttrs}; Max-Age=0`;
    },
    csrfToken,
    csrfProblem(req, given) {
      const origin = originProblem(req);
      if (origin) return origin;
      if (!secretMatches(given, csrfToken)) return 'missing or wrong CSRF token';
      return null;
    },
  };
}

/**
 * Why a POST does not come from the daemon's own origin, or null when it does: its Origin
 * header (or, when a browser sends none, its Referer) must name the host it was sent to.
 * A request with neither is refused: a form of this page always sends one of them.
 */
export function originProblem(req: IncomingMessage): string | null {
  const origin = req.headers.origin;
  const referer = req.headers.referer;
  if (origin === 'null') return 'opaque Origin';
  const [what, value] = origin !== undefined ? ['Origin', origin] : referer !== undefined ? ['Referer', referer] : [null, null];
  if (what === null) return 'no Origin or Referer header: actions are taken from the dashboard page';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return `malformed ${what} header`;
  }
  // The origin only: a Referer's path and query (a searched number) stay out of logs.
  if (url.host !== req.headers.host) return `cross-origin request from ${url.origin}`;
  return null;
}

/** One cookie's value from the Cookie header. */
export function readCookie(req: IncomingMessage, name: string): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

// The rule of who may be shown the dashboard at all lives with the start-up checks, which
// `validate` reports too (config/start-checks.ts).
export { isLoopback };
