import { attemptByCallId, liveAttemptByPhone } from '../store/attempts.js';
import { campaignAccount } from '../config/accounts.js';
import { createEngine, type Engine, type EngineOptions, type EngineStatus } from './engine.js';
import type { EngineClient } from './ports.js';
import { normaliseServicePhone } from './phone-match.js';
import type { WebhookResult } from './webhook.js';

// Many accounts in one daemon (README, "Many accounts"): one engine per account, each with
// its own client (so its own rate budget, X-RateLimit-* and 429 state), its own service
// state (a rejected token stops only its campaigns), its own dial loop under its own
// live-call cap and its own poller over its own calls. One account's limiter or errors
// therefore never hold back another's: the loops share nothing but the database.
// Which accounts this daemon dials is one input, `dials`: a later change hands each
// instance a subset of the accounts under per-account leases.

export interface AccountLane {
  name: string;
  client: EngineClient;
  maxCallsInParallel?: number | undefined;
}

export interface AccountEnginesOptions extends Omit<EngineOptions, 'client' | 'accountMaxCalls' | 'account'> {
  accounts: readonly AccountLane[];
  /** The accounts this daemon dials (default: all). */
  dials?: ReadonlySet<string>;
}

/** One account's state as `status` shows it. */
export interface AccountState extends EngineStatus {
  name: string;
}

export type AccountEngines = Engine & {
  accounts(): AccountState[];
  account(name: string): Engine | undefined;
};

export function createAccountEngines(opts: AccountEnginesOptions): AccountEngines {
  const { accounts, dials, ...shared } = opts;
  const lanes = accounts.filter((a) => !dials || dials.has(a.name));
  if (lanes.length === 0) throw new Error('no account to dial');
  // One account: the engine as it always was (no filter, no account in its logs).
  const several = accounts.length > 1;
  const engines = new Map<string, Engine>(
    lanes.map((a) => [
      a.name,
      createEngine({
        ...shared,
        client: a.client,
        accountMaxCalls: a.maxCallsInParallel,
        ...(several ? { account: { name: a.name, dials: (c) => campaignAccount(c.config, accounts) === a.name } } : {}),
      }),
    ]),
  );
  const all = [...engines.values()];
  const first = all[0]!;
  const each = async (fn: (e: Engine) => Promise<void>): Promise<void> => {
    await Promise.all(all.map(fn));
  };

  /**
   * The account whose call a delivery is about: the call's id → attempt → campaign → account
   * (else the live attempt on the customer's number). Its engine records it and its dial loop
   * learns of the freed slot; one it cannot place goes to the first, which reports it unknown.
   */
  async function accountOfCall(payload: unknown): Promise<[string, Engine]> {
    const firstLane: [string, Engine] = [...engines][0]!;
    if (all.length === 1 || typeof payload !== 'object' || payload === null) return firstLane;
    const p = payload as { id?: unknown; customer_phone?: unknown };
    const byId = p.id === undefined || p.id === null ? undefined : await attemptByCallId(shared.db, String(p.id));
    const attempt = byId ?? (typeof p.customer_phone === 'string' ? await liveAttemptByPhone(shared.db, normaliseServicePhone(p.customer_phone)) : undefined);
    return (attempt && [...engines].find(([, e]) => e.owns(attempt.campaign_id))) || firstLane;
  }

  return {
    async start(role = {}) {
      await each((e) => e.start(role));
    },
    async stop(graceMs) {
      await each((e) => e.stop(graceMs));
    },
    async becomeActive() {
      await each((e) => e.becomeActive());
    },
    async becomeStandby(graceMs) {
      await each((e) => e.becomeStandby(graceMs));
    },
    isActive: () => all.some((e) => e.isActive()),
    async reload() {
      await each((e) => e.reload());
    },
    async handleWebhook(payload, receivedAt): Promise<WebhookResult> {
      const [name, engine] = await accountOfCall(payload);
      const result = await engine.handleWebhook(payload, receivedAt);
      return several ? { ...result, account: name } : result;
    },
    async tokenChanged() {
      await each((e) => e.tokenChanged());
    },
    /** The daemon's API state: ok while every account's is; else the first account in trouble, named. */
    status(): EngineStatus {
      if (!several) return first.status();
      const bad = [...engines].find(([, e]) => e.status().api !== 'ok');
      if (!bad) return first.status();
      const [name, e] = bad;
      const s = e.status();
      return { api: s.api, apiDetail: `account ${name}: ${s.apiDetail ?? s.api}` };
    },
    owns: (id) => all.some((e) => e.owns(id)),
    inflight: () => all.reduce((n, e) => n + e.inflight(), 0),
    wake() {
      for (const e of all) e.wake();
    },
    accounts: () => [...engines].map(([name, e]) => ({ name, ...e.status() })),
    account: (name) => engines.get(name),
  };
}
