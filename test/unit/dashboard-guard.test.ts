import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import type { Kysely } from 'kysely';
import { createGuard, isLoopback, originProblem, SESSION_COOKIE } from '../../src/dashboard/guard.js';
import type { Database } from '../../src/store/types.js';
import { ManualClock } from '../../src/time/clock.js';

const req = (headers: Record<string, string>): IncomingMessage => ({ headers: { host: '127.0.0.1:9464', ...headers } }) as unknown as IncomingMessage;

// Sessions (sign-in, sign-out, expiry) need the store: test/integration/store-dashboard-sessions.test.ts.
describe('dashboard guard', () => {
  const db = {} as Kysely<Database>; // never reached: nothing here starts or checks a session
  const clock = new ManualClock();
  const guard = createGuard({ token: 's3cret-token', db, clock });

  it('checks the token in constant time and only when one is configured', async () => {
    expect(guard.tokenMatches('s3cret-token')).toBe(true);
    expect(guard.tokenMatches('s3cret-toke')).toBe(false);
    expect(guard.tokenMatches('')).toBe(false);
    const open = createGuard({ token: undefined, db, clock });
    expect(open.tokenRequired).toBe(false);
    expect(open.tokenMatches('')).toBe(false);
    await expect(open.authorised(req({}))).resolves.toBe(true);
    // A cookie that is not a session id is refused before the store is asked.
    await expect(guard.authorised(req({}))).resolves.toBe(false);
    await expect(guard.authorised(req({ cookie: `${SESSION_COOKIE}=s3cret-token` }))).resolves.toBe(false);
  });

  it('refuses actions without the CSRF token or from another origin', () => {
    expect(guard.csrfProblem(req({ origin: 'http://127.0.0.1:9464' }), guard.csrfToken)).toBeNull();
    expect(guard.csrfProblem(req({ origin: 'http://127.0.0.1:9464' }), undefined)).toMatch(/CSRF/);
    expect(guard.csrfProblem(req({ origin: 'http://127.0.0.1:9464' }), 'nope')).toMatch(/CSRF/);
    expect(guard.csrfProblem(req({ origin: 'http://evil.example' }), guard.csrfToken)).toMatch(/cross-origin/);
    expect(guard.csrfProblem(req({ origin: 'null' }), guard.csrfToken)).toMatch(/opaque/);
    // Without a token, the CSRF token is random per process, never guessable.
    expect(createGuard({ token: undefined, db, clock }).csrfToken).not.toBe(createGuard({ token: undefined, db, clock }).csrfToken);
  });

  it('requires the Origin, or the Referer when there is no Origin, to name the daemon itself', () => {
    // Neither header: refused, even with the right CSRF token.
    expect(guard.csrfProblem(req({}), guard.csrfToken)).toBe('no Origin or Referer header: actions are taken from the dashboard page');
    expect(originProblem(req({ referer: 'http://127.0.0.1:9464/?phone=%2B15551234567' }))).toBeNull();
    // Only the origin of another site's Referer is told, never its path or query.
    expect(originProblem(req({ referer: 'http://evil.example/x?phone=%2B1555' }))).toBe('cross-origin request from http://evil.example');
    expect(originProblem(req({ referer: 'http://127.0.0.1:9465/' }))).toMatch(/cross-origin/);
    expect(originProblem(req({ referer: 'not a url' }))).toBe('malformed Referer header');
    // The Origin decides when both are sent.
    expect(originProblem(req({ origin: 'http://evil.example', referer: 'http://127.0.0.1:9464/' }))).toMatch(/cross-origin/);
  });
});

describe('dashboard exposure at start', () => {
  it('knows loopback addresses', () => {
    for (const h of ['127.0.0.1', '127.1.2.3', 'localhost', '::1', '[::1]']) expect(isLoopback(h), h).toBe(true);
    for (const h of ['0.0.0.0', '::', '10.0.0.5', '192.168.1.2', 'example.com']) expect(isLoopback(h), h).toBe(false);
  });
});
