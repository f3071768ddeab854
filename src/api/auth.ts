import type { Kysely } from 'kysely';
import type { Clock } from '../time/clock.js';
import type { Database } from '../store/types.js';
import type { AuthResult } from './deps.js';

// Until API keys exist (campaignd api-key), the API follows the dashboard's exposure rule:
// open on a loopback address, closed everywhere else.

export function createAuthorizer(opts: { db: Kysely<Database>; clock: Clock; loopback: boolean }): (header: string | undefined, scope: 'read' | 'write') => Promise<AuthResult> {
  return async () => (opts.loopback ? { ok: true, keyName: null } : { ok: false, status: 401, detail: 'the API is open only on a loopback http.listen until keys exist' });
}
