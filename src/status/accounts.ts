import type { Transaction } from 'kysely';
import { isPostgres } from '../store/dialect.js';
import type { DaemonAccount } from '../store/daemons.js';
import { readLease } from '../store/lease.js';
import { accountHoldings } from '../store/account-leases.js';
import type { ApiStatus, Database, DaemonRow } from '../store/types.js';

// The accounts part of `status` (README, "Many accounts"): each account the running daemons
// dial, the instance holding it, and what that instance knows of it (the service's verdict
// on its token, its requests and 429s), as written with each heartbeat.

export interface AccountStatus {
  name: string;
  /** The instance dialing it (its instance id), with its pid and host. */
  instance: string;
  pid: number;
  hostname: string;
  /** When the lease it is dialed under runs out (PostgreSQL); null without one (SQLite). */
  lease_expires_at: string | null;
  api: ApiStatus;
  api_detail: string | null;
  requests: { sent: number; rate_limited: number };
}

/** The accounts of the running daemon rows `live`; undefined when none wrote any (a daemon older than accounts). */
export async function collectAccounts(trx: Transaction<Database>, live: DaemonRow[]): Promise<AccountStatus[] | undefined> {
  const written = live.filter((r) => typeof r.accounts_json === 'string');
  if (written.length === 0) return undefined;
  const lease = isPostgres(trx) ? await readLease(trx) : undefined;
  // Several active instances: each account has a lease of its own, and every instance writes
  // every account; the account is shown once, from the instance holding its lease.
  const holdings = isPostgres(trx) ? new Map((await accountHoldings(trx)).map((h) => [h.account, h])) : new Map();
  const out: AccountStatus[] = [];
  const shown = new Set<string>();
  for (const row of written) {
    // Without per-account leases one lease covers the instance: the accounts it dials share its expiry.
    const expires = lease?.live && lease.holder === row.instance_id ? new Date(lease.expires_at).toISOString() : null;
    for (const a of parseAccounts(row.accounts_json)) {
      const holding = holdings.get(a.name);
      if (holding) {
        // Shown from its holder's row; an account nobody holds now (between a death and its takeover) from the first row.
        if (shown.has(a.name) || (holding.instance !== null ? holding.instance !== row.instance_id : false)) continue;
        shown.add(a.name);
        out.push({
          ...accountStatus(a, row),
          lease_expires_at: holding.lease_expires_at === null ? null : new Date(holding.lease_expires_at).toISOString(),
        });
        continue;
      }
      out.push({ ...accountStatus(a, row), lease_expires_at: expires });
    }
  }
  return out.sort((x, y) => x.name.localeCompare(y.name));
}

function accountStatus(a: DaemonAccount, row: DaemonRow): Omit<AccountStatus, 'lease_expires_at'> {
  return {
    name: a.name,
    instance: row.instance_id,
    pid: row.pid,
    hostname: row.hostname,
    api: a.api,
    api_detail: a.apiDetail,
    requests: { sent: a.requests.sent, rate_limited: a.requests.rateLimited },
  };
}

function parseAccounts(text: string | null): DaemonAccount[] {
  try {
    const list = JSON.parse(text ?? '[]') as unknown;
    return Array.isArray(list) ? (list as DaemonAccount[]).filter((a) => typeof a?.name === 'string') : [];
  } catch {
    return [];
  }
}

/** The ACCOUNTS block of the human status: one line per account, only when there are several. */
export function renderAccountLines(accounts: readonly AccountStatus[] | undefined): string[] {
  if (!accounts || accounts.length < 2) return [];
  const width = Math.max(...accounts.map((a) => a.name.length));
  return [
    'ACCOUNTS',
    ...accounts.map((a) => {
      const api = a.api === 'ok' ? 'ok' : `${a.api}${a.api_detail ? ` (${a.api_detail})` : ''}`;
      const lease = a.lease_expires_at === null ? '' : `  lease until ${a.lease_expires_at}`;
      return `  ${a.name.padEnd(width)}  pid ${a.pid} on ${a.hostname}${lease}  api ${api}  requests ${a.requests.sent}, 429s ${a.requests.rate_limited}`;
    }),
  ];
}
