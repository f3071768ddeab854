import { Agent, request } from 'undici';
import type { Kysely } from 'kysely';
import type { Logger } from '../log/logger.js';
import type { Database } from '../store/types.js';
import type { Clock } from '../time/clock.js';
import { deferEvent, disableHook, disabledHookUrls, hookBacklogs, pendingEvents, removeEvents, type HookBacklog } from '../store/hook-outbox.js';
import { signatureHeader } from './signature.js';

// Delivers the outbox (docs/design.md §9): a loop of its own, never on the dialing
// path. Per hook, the oldest undelivered event of each lead is tried, several leads at a
// time; a lead's later events wait behind it, so each lead's events arrive in order. A
// 2xx acknowledges; a 410 disables the hook; anything else (a refused connection, a
// timeout, a 5xx) is tried again after an exponential backoff with jitter, for up to
// 72 h from the event, across restarts (the schedule is in the outbox row).

const WINDOW = 200;
const CONCURRENCY = 8;
const IDLE_MS = 1_000;
const FIRST_RETRY_MS = 1_000;
const MAX_RETRY_MS = 3600_000;
export const GIVE_UP_MS = 72 * 3600_000;
const BACKLOG_EVERY_MS = 10_000;

/** One configured hook with its secret's variable. */
export interface SenderHook {
  url: string;
  secretEnv: string;
}

/** Sends one delivery; resolves with the HTTP status, rejects on a network error or timeout. */
export type HookPost = (url: string, body: string, headers: Record<string, string>) => Promise<number>;

export interface HookMetricsSink {
  delivered(hook: string): void;
  failed(hook: string): void;
  backlog(list: readonly HookBacklog[], now: number): void;
}

export interface HookSenderOptions {
  db: Kysely<Database>;
  clock: Clock;
  logger: Logger;
  hooks: readonly SenderHook[];
  /** The secret named by a hook's secret_env; undefined when unset. */
  secret: (envName: string) => string | undefined;
  /** [0, 1) for the jitter (tests pass their own). */
  random?: () => number;
  post?: HookPost;
  /** How long a receiver may take to answer, in ms (default 10 s). */
  timeoutMs?: number;
  /** How often the outbox is looked at for new events when nothing is due (default 1 s). */
  idleMs?: number;
  metrics?: HookMetricsSink;
}

export interface HookSender {
  /** Resolves when the loop ended (after stop). */
  done: Promise<void>;
  /** Looks at the outbox now (new events were committed). */
  wake(): void;
  stop(): Promise<void>;
}

/** The delay before try number `tries + 1`: doubling from 1 s to at most 1 h, each drawn in [½, 1] of it. */
export function retryDelayMs(tries: number, random: () => number): number {
  const full = Math.min(MAX_RETRY_MS, FIRST_RETRY_MS * 2 ** Math.min(tries, 30));
  return Math.round(full * (0.5 + random() / 2));
}

/** Starts the delivery loop. */
export function startHookSender(opts: HookSenderOptions): HookSender {
  const log = opts.logger.child({ component: 'hooks' });
  const idleMs = opts.idleMs ?? IDLE_MS;
  const random = opts.random ?? Math.random;
  const agent = opts.post ? null : new Agent({ headersTimeout: opts.timeoutMs ?? 10_000, bodyTimeout: opts.timeoutMs ?? 10_000, connect: { timeout: opts.timeoutMs ?? 10_000 } });
  const post: HookPost =
    opts.post ??
    (async (url, body, headers) => {
      const res = await request(url, { method: 'POST', body, headers, dispatcher: agent!, signal: aborter.signal });
      await res.body.dump();
      return res.statusCode;
    });
  let stopped = false;
  let wakeUp = new AbortController();
  // Stopping cuts deliveries in flight: the daemon's stop must not wait on a slow receiver
  // (the event stays in the outbox and goes again after the restart).
  const aborter = new AbortController();
  const missingSecret = new Set<string>();
  const disabled = new Set<string>();
  let lastBacklogAt = Number.NEGATIVE_INFINITY;

  async function deliverHook(hook: SenderHook, now: number): Promise<{ sent: number; nextAt: number }> {
    let nextAt = Number.POSITIVE_INFINITY;
    const secret = opts.secret(hook.secretEnv);
    if (!secret) {
      if (!missingSecret.has(hook.url)) log.error({ hook: hook.url, secret_env: hook.secretEnv }, 'hook not sent to: its secret_env is not set (events are kept and sent once it is, after SIGHUP or a restart)');
      missingSecret.add(hook.url);
      return { sent: 0, nextAt };
    }
    const rows = await pendingEvents(opts.db, hook.url, WINDOW);
    const heads = new Set<number | string>();
    const due: typeof rows = [];
    for (const r of rows) {
      const lane = r.lead_id ?? `event:${r.id}`;
      if (heads.has(lane)) continue;
      heads.add(lane);
      if (Number(r.next_try_at) <= now) due.push(r);
      else nextAt = Math.min(nextAt, Number(r.next_try_at));
    }
    const acked: number[] = [];
    let gone = false;
    const work = async (r: (typeof rows)[number]): Promise<void> => {
      if (gone || stopped) return;
      if (r.body === null) {
        acked.push(r.id); // erased by `forget`: nothing left to send
        return;
      }
      let outcome: string;
      try {
        const status = await post(hook.url, r.body, {
          'content-type': 'application/json',
          'user-agent': 'campaignd-hooks',
          'x-campaignd-event': r.type,
          'x-campaignd-signature': signatureHeader(secret, r.body, Math.floor(opts.clock.now() / 1000)),
        });
        if (status >= 200 && status < 300) {
          acked.push(r.id);
          opts.metrics?.delivered(hook.url);
          return;
        }
        if (status === 410) {
          gone = true;
          return;
        }
        outcome = `HTTP ${status}`;
      } catch (err) {
        if (stopped) return;
        outcome = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
      }
      opts.metrics?.failed(hook.url);
      const at = opts.clock.now();
      if (at - Number(r.created_at) >= GIVE_UP_MS) {
        acked.push(r.id);
        log.error({ hook: hook.url, event: r.event_id, type: r.type, lead: r.lead_id, tries: Number(r.tries) + 1, last: outcome }, 'hook event given up after 72 h of failed deliveries');
        return;
      }
      const next = at + retryDelayMs(Number(r.tries), random);
      nextAt = Math.min(nextAt, next);
      await deferEvent(opts.db, r.id, next, outcome);
      if (Number(r.tries) === 0) log.warn({ hook: hook.url, event: r.event_id, error: outcome }, 'hook delivery failed; will retry with backoff');
    };
    for (let i = 0; i < due.length; i += CONCURRENCY) await Promise.all(due.slice(i, i + CONCURRENCY).map(work));
    await removeEvents(opts.db, acked);
    if (gone) {
      const dropped = await disableHook(opts.db, hook.url, '410 Gone', opts.clock.now());
      disabled.add(hook.url);
      log.error({ hook: hook.url, dropped }, 'hook answered 410 Gone: disabled, its undelivered events dropped (remove it from hooks: and reload to forget this)');
    }
    return { sent: due.length, nextAt };
  }

  async function pass(): Promise<number> {
    const now = opts.clock.now();
    let sleep = idleMs;
    for (const hook of opts.hooks) {
      if (stopped || disabled.has(hook.url)) continue;
      const { sent, nextAt } = await deliverHook(hook, now);
      if (sent > 0) sleep = 0;
      else if (Number.isFinite(nextAt)) sleep = Math.min(sleep, Math.max(0, nextAt - opts.clock.now()));
    }
    // The backlog is an aggregate over the outbox: every 10 s is often enough for a gauge.
    if (opts.metrics && now - lastBacklogAt >= BACKLOG_EVERY_MS) {
      lastBacklogAt = now;
      opts.metrics.backlog(await hookBacklogs(opts.db), now);
    }
    return sleep;
  }

  async function loop(): Promise<void> {
    for (const url of await disabledHookUrls(opts.db)) disabled.add(url);
    while (!stopped) {
      let sleep = idleMs;
      try {
        sleep = await pass();
      } catch (err) {
        log.warn({ err: String(err) }, 'hook delivery pass failed; will try again');
      }
      if (stopped) break;
      if (sleep > 0) {
        const signal = wakeUp.signal;
        await opts.clock.sleep(sleep, signal);
        if (signal.aborted) wakeUp = new AbortController();
      }
    }
  }

  const done = loop();
  return {
    done,
    wake() {
      wakeUp.abort();
    },
    async stop() {
      stopped = true;
      wakeUp.abort();
      aborter.abort();
      await done;
      await agent?.close();
    },
  };
}
