import { describe, expect, it } from 'vitest';
import { readiness } from '../../src/http/readiness.js';

describe('/readyz', () => {
  it('with the one api: account: ready only with the database and the token', () => {
    expect(readiness({ database: 'ok', accounts: [{ name: 'default', api: 'ok' }] })).toEqual({ ok: true, checks: { database: 'ok', token: 'ok' } });
    expect(readiness({ database: 'ok', accounts: [{ name: 'default', api: 'token-rejected' }] })).toEqual({ ok: false, checks: { database: 'ok', token: 'rejected by the service' } });
    expect(readiness({ database: 'ok', accounts: [{ name: 'default', api: 'unknown' }] }).ok).toBe(false);
    expect(readiness({ database: 'unavailable', accounts: [{ name: 'default', api: 'ok' }] }).ok).toBe(false);
    const missing = readiness({ database: 'ok', accounts: [{ name: 'default', api: 'token-rejected' }], tokenProblem: 'token file /etc/campaignd/token: not found' });
    expect(missing).toEqual({ ok: false, checks: { database: 'ok', token: 'token file /etc/campaignd/token: not found' } });
  });

  it("with several accounts: one client's rejected token leaves the daemon ready (the others' webhooks keep reaching it); none usable is not ready", () => {
    const one = readiness({ database: 'ok', accounts: [{ name: 'acme', api: 'ok' }, { name: 'globex', api: 'token-rejected' }] });
    expect(one).toEqual({ ok: true, checks: { database: 'ok', accounts: '1 of 2 ok; globex rejected by the service' } });
    expect(readiness({ database: 'ok', accounts: [{ name: 'acme', api: 'ok' }, { name: 'globex', api: 'ok' }] })).toEqual({ ok: true, checks: { database: 'ok', accounts: 'ok' } });
    const none = readiness({ database: 'ok', accounts: [{ name: 'acme', api: 'unreachable' }, { name: 'globex', api: 'token-rejected' }] });
    expect(none).toEqual({ ok: false, checks: { database: 'ok', accounts: '0 of 2 ok; acme unreachable, globex rejected by the service' } });
    expect(readiness({ database: 'unavailable', accounts: [{ name: 'acme', api: 'ok' }, { name: 'globex', api: 'ok' }] }).ok).toBe(false);
  });
});
