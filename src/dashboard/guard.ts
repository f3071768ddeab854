import crypto from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { secretMatches } from '../http/secret.js';
import { isLoopback } from '../config/start-checks.js';

// Who may read the dashboard and act on it.
//  - With a token (http.dashboard_token_env), the page asks for it once; the cookie then
//    holds a value derived from it (an HMAC), never the token itself, HttpOnly and
//    SameSite=Strict. Every read and action checks that cookie in constant time.
//  - Actions are POST and must also carry the CSRF token printed in the page (derived
//    from the same key), and an Origin, when the browser sends one, naming this host.
//  - Without a token (loopback only: see config/start-checks.ts) the key is random per process,
//    so the CSRF check still holds.

export const SESSION_COOKIE = 'campaignd_dashboard';

export interface Guard {
  /** Whether a token must be given (a token is configured). */
  readonly tokenRequired: boolean;
  /** Whether `token` is the configured token (constant time). */
  tokenMatches(token: string): boolean;
  /** Whether the request carries a valid session cookie (always true without a token). */
  authorised(req: IncomingMessage): boolean;
  /** The Set-Cookie header value of a new session. */
  sessionCookie(): string;
  /** The Set-Cookie header value that ends the session. */
  clearCookie(): string;
  /** The CSRF token the page embeds in its forms. */
  readonly csrfToken: string;
  /** Why an action request fails the CSRF check, or null when it passes. */
  csrfProblem(req: IncomingMessage, given: string | undefined): string | null;
}

export function createGuard(token: string | undefined, randomKey: Buffer = crypto.randomBytes(32)): Guard {
  const key = token ? Buffer.from(token, 'utf8') : randomKey;
  const derive = (purpose: string): string => crypto.createHmac('sha256', key).update(`campaignd-dashboard:${purpose}`).digest('base64url');
  const session = derive('session');
  const csrfToken = derive('csrf');
  const cookieAttrs = 'Path=/; HttpOnly; SameSite=Strict';
  return {
    tokenRequired: token !== undefined,
    tokenMatches: (given) => token !== undefined && secretMatches(given, token),
    authorised: (req) => token === undefined || secretMatches(readCookie(req, SESSION_COOKIE), session),
    sessionCookie: () => `${SESSION_COOKIE}=${session}; ${cookieAttrs}`,
    clearCookie: () => `${SESSION_COOKIE}=; ${cookieAttrs}; Max-Age=0`,
    csrfToken,
    csrfProblem(req, given) {
      const origin = req.headers.origin;
      if (origin !== undefined && origin !== 'null') {
        let host: string;
        try {
          host = new URL(origin).host;
        } catch {
          return 'malformed Origin header';
        }
        if (host !== req.headers.host) return `cross-origin request from ${origin}`;
      } else if (origin === 'null') {
        return 'opaque Origin';
      }
      if (!secretMatches(given, csrfToken)) return 'missing or wrong CSRF token';
      return null;
    },
  };
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
