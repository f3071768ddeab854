import type { Kysely } from 'kysely';
import type { Logger } from '../log/logger.js';
import type { Clock } from '../time/clock.js';
import type { Database } from '../store/types.js';
import { deleteInboxItem, inboxAccounts, inboxFor, type InboxItem } from '../store/webhook-inbox.js';

// The holder's side of the webhook inbox (src/store/webhook-inbox.ts): deliveries another
// instance received for an account this one holds are applied here, each in the account's own
// group commit together with its removal, so a delivery is applied once even if two drains
// (a handover's giver and taker) read it. Drained when the account is taken and every
// `everyMs` (no NOTIFY: see webhook-inbox.ts).

/** Deliveries read per round: each goes in the account's group commit of that turn. */
const BATCH = 100;

export interface InboxDrainOptions {
  db: Kysely<Database>;
  clock: Clock;
  logger: Logger;
  everyMs: number;
  /**
   * How long an account with deliveries queued must have had no holder before this instance
   * applies them: longer than a handover or a takeover takes, so that the account's next
   * holder, not a third instance, writes its campaigns in the normal course.
   */
  strandedAfterMs: number;
  /** Whether this instance holds the account now. */
  holds(account: string): boolean;
  /** Applies one delivery; `remove` must be written in the transaction that applies it. */
  apply(account: string, payload: unknown, receivedAt: number, remove: (trx: Kysely<Database>) => Promise<void>): Promise<{ invalid?: boolean }>;
}

export interface InboxDrain {
  /** Applies what is queued for `account` if this instance holds it (once more after a drain running now). */
  drain(account: string): void;
  start(): void;
  stop(): Promise<void>;
}

export function createInboxDrain(opts: InboxDrainOptions): InboxDrain {
  const log = opts.logger.child({ component: 'webhook-inbox' });
  const running = new Map<string, Promise<void>>();
  const again = new Set<string>();
  /** Accounts with deliveries queued and no holder, since when (this instance's clock) they were seen so. */
  let unheldSince = new Map<string, number>();
  /** Stranded: without a holder for longer than strandedAfterMs; their deliveries are applied here. */
  let stranded = new Set<string>();
  const mayApply = (account: string): boolean => opts.holds(account) || stranded.has(account);
  let cancelTimer: (() => void) | null = null;
  let stopped = false;

  async function applyItem(account: string, item: InboxItem): Promise<void> {
    let payload: unknown;
    try {
      payload = JSON.parse(item.payload);
    } catch {
      payload = undefined;
    }
    const result = payload === undefined ? { invalid: true } : await opts.apply(account, payload, item.received_at, (trx) => deleteInboxItem(trx, item.id));
    // Only a delivery that read as one was queued; should one not, it is dropped, not retried for ever.
    if (result.invalid) {
      log.warn({ account, item: item.id }, 'queued post-call webhook unreadable; dropped');
      await deleteInboxItem(opts.db, item.id);
    }
  }

  async function drainNow(account: string): Promise<void> {
    do {
      again.delete(account);
      for (;;) {
        if (stopped || !mayApply(account)) return;
        const items = await inboxFor(opts.db, account, BATCH);
        await Promise.all(items.map((item) => applyItem(account, item)));
        if (items.length < BATCH) break;
      }
    } while (again.has(account));
  }

  function drain(account: string): void {
    if (stopped || !mayApply(account)) return;
    if (running.has(account)) {
      again.add(account);
      return;
    }
    const run = drainNow(account)
      .catch((err: unknown) => log.warn({ account, err: err instanceof Error ? err.message : String(err) }, 'queued post-call webhooks not applied yet; tried again shortly'))
      .finally(() => running.delete(account));
    running.set(account, run);
  }

  async function sweep(): Promise<void> {
    try {
      const queued = await inboxAccounts(opts.db);
      const now = opts.clock.now();
      unheldSince = new Map(queued.filter((q) => !q.held).map((q) => [q.account, unheldSince.get(q.account) ?? now]));
      stranded = new Set([...unheldSince].filter(([, since]) => now - since >= opts.strandedAfterMs).map(([account]) => account));
      for (const { account } of queued) drain(account);
    } catch (err) {
      log.warn({ err: err instanceof Error ? err.message : String(err) }, 'could not look for queued post-call webhooks');
    }
    if (!stopped) cancelTimer = opts.clock.setTimer(opts.everyMs, () => void sweep());
  }

  return {
    drain,
    start() {
      stopped = false;
      cancelTimer = opts.clock.setTimer(opts.everyMs, () => void sweep());
    },
    async stop() {
      stopped = true;
      cancelTimer?.();
      await Promise.all(running.values());
    },
  };
}
