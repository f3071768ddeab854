// What `/readyz` answers. A load balancer or an orchestrator takes a daemon that is not
// ready out of rotation, and with it the post-call webhooks of every account it serves:
// so with several accounts one client's rejected token does not make the daemon unready
// (its campaigns stop with the problem in `status`); only a daemon none of whose accounts
// can dial, or whose database is gone, is. With the single `api:` account, as before: a
// rejected or missing token is not ready.
import type { ApiStatus } from '../store/types.js';
import type { Readiness } from './server.js';

export interface ReadinessInput {
  database: 'ok' | 'unavailable';
  /** Each account's state with the service (one, `default`, without `accounts:`); a token file that cannot be read counts as rejected. */
  accounts: readonly { name: string; api: ApiStatus }[];
  /** Why the `api:` block's token could not be read (a daemon without `accounts:`): shown as is. */
  tokenProblem?: string | undefined;
}

const words = (api: ApiStatus): string => (api === 'token-rejected' ? 'rejected by the service' : api);

export function readiness({ database, accounts, tokenProblem }: ReadinessInput): Readiness {
  if (accounts.length === 1) {
    const api = accounts[0]!.api;
    return { ok: database === 'ok' && api === 'ok' && !tokenProblem, checks: { database, token: tokenProblem ?? words(api) } };
  }
  const usable = accounts.filter((a) => a.api === 'ok').length;
  const trouble = accounts.filter((a) => a.api !== 'ok').map((a) => `${a.name} ${words(a.api)}`);
  const summary = trouble.length === 0 ? 'ok' : `${usable} of ${accounts.length} ok; ${trouble.join(', ')}`;
  return { ok: database === 'ok' && usable > 0, checks: { database, accounts: summary } };
}
