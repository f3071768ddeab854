import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { createGuard, isLoopback, SESSION_COOKIE } from '../../src/dashboard/guard.js';

const req = (headers: Record<string, string>): IncomingMessage => ({ headers: { host: '127.0.0.1:9464', ...headers } }) as unknown as IncomingMessage;

describe('dashboard guard', () => {
  const guard = createGuard('s3cret-token');
  const cookie = guard.sessionCookie();

  it('sets an HttpOnly, SameSite=Strict session cookie that is not the token itself', () => {
    expect(cookie).toMatch(new RegExp(`^${SESSION_COOKIE}=[A-Za-z0-9_-]{20,}; Path=/; HttpOnly; SameSite=Strict$`));
    expect(cookie).not.toContain('s3cret-token');
    expect(guard.clearCookie()).toContain('Max-Age=0');
  });

  it('authorises the session cookie only', () => {
    const value = cookie.split(';')[0]!;
    expect(guard.authorised(req({ cookie: `a=b; ${value}` }))).toBe(true);
    expect(guard.authorised(req({}))).toBe(false);
    expect(guard.authorised(req({ cookie: `${SESSION_COOKIE}=s3cret-token` }))).toBe(false);
    expect(guard.authorised(req({ cookie: `${value}x` }))).toBe(false);
    // Another token gives another session: a cookie of one daemon does not open another.
    expect(createGuard('other').authorised(req({ cookie: value }))).toBe(false);
  });

  it('checks the token in constant time and only when one is configured', () => {
    expect(guard.tokenMatches('s3cret-token')).toBe(true);
    expect(guard.tokenMatches('s3cret-toke')).toBe(false);
    expect(guard.tokenMatches('')).toBe(false);
    const open = createGuard(undefined);
    expect(open.tokenRequired).toBe(false);
    expect(open.tokenMatches('')).toBe(false);
    expect(open.authorised(req({}))).toBe(true);
  });

  it('refuses actions without the CSRF token or from another origin', () => {
    expect(guard.csrfProblem(req({ origin: 'http://127.0.0.1:9464' }), guard.csrfToken)).toBeNull();
    expect(guard.csrfProblem(req({}), guard.csrfToken)).toBeNull();
    expect(guard.csrfProblem(req({ origin: 'http://127.0.0.1:9464' }), undefined)).toMatch(/CSRF/);
    expect(guard.csrfProblem(req({ origin: 'http://127.0.0.1:9464' }), 'nope')).toMatch(/CSRF/);
    expect(guard.csrfProblem(req({ origin: 'http://evil.example' }), guard.csrfToken)).toMatch(/cross-origin/);
    expect(guard.csrfProblem(req({ origin: 'null' }), guard.csrfToken)).toMatch(/opaque/);
    // Without a token, the CSRF token is random per process, never guessable.
    expect(createGuard(undefined).csrfToken).not.toBe(createGuard(undefined).csrfToken);
  });
});

describe('dashboard exposure at start', () => {
  it('knows loopback addresses', () => {
    for (const h of ['127.0.0.1', '127.1.2.3', 'localhost', '::1', '[::1]']) expect(isLoopback(h), h).toBe(true);
    for (const h of ['0.0.0.0', '::', '10.0.0.5', '192.168.1.2', 'example.com']) expect(isLoopback(h), h).toBe(false);
  });
});
