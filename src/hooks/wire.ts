import type { Kysely } from 'kysely';
import type { DaemonConfig } from '../config/types.js';
import type { Metrics } from '../http/metrics.js';
import type { Logger } from '../log/logger.js';
import type { Database } from '../store/types.js';
import type { Clock } from '../time/clock.js';
import { syncHookSubscriptions } from '../store/hook-outbox.js';
import { startHookSender, type HookSender } from './sender.js';

// The daemon's hooks: subscriptions written from the config (so the triggers know what
// to queue; none while no hook is configured) and the sender loop, restarted on reload.

export interface DaemonHooks {
  reload(daemon: DaemonConfig): Promise<void>;
  /**
   * Whether this instance delivers. Only the active instance does (docs/design.md §10): two
   * senders on one outbox would deliver events twice and out of order. Subscriptions are
   * written either way, so that a standby's recorded webhooks queue their events.
   */
  setSending(on: boolean): Promise<void>;
  stop(): Promise<void>;
}

export interface DaemonHooksOptions {
  db: Kysely<Database>;
  clock: Clock;
  logger: Logger;
  metrics: Metrics;
  /** The value of an environment variable (a hook's secret_env). */
  secret: (envName: string) => string | undefined;
  /** Deliver from the start (default true; a standby starts without). */
  sending?: boolean;
}

/** Writes the subscriptions and starts delivering; `reload` applies a changed `hooks:` list. */
export async function startDaemonHooks(daemon: DaemonConfig, opts: DaemonHooksOptions): Promise<DaemonHooks> {
  let sender: HookSender | null = null;
  let sending = opts.sending ?? true;
  let current = daemon;
  const apply = async (config: DaemonConfig): Promise<void> => {
    current = config;
    await sender?.stop();
    sender = null;
    const hooks = config.hooks ?? [];
    const dropped = await syncHookSubscriptions(opts.db, hooks);
    if (dropped > 0) opts.logger.warn({ dropped }, 'hooks: undelivered events of hooks no longer in the config dropped');
    if (hooks.length === 0 || !sending) return;
    sender = startHookSender({
      db: opts.db,
      clock: opts.clock,
      logger: opts.logger,
      hooks,
      secret: opts.secret,
      metrics: {
        delivered: (hook) => opts.metrics.hookDeliveries.inc({ hook, result: 'delivered' }),
        failed: (hook) => opts.metrics.hookDeliveries.inc({ hook, result: 'failed' }),
        backlog: (list, now) => {
          opts.metrics.hookBacklog.reset();
          opts.metrics.hookOldestSeconds.reset();
          for (const b of list) {
            opts.metrics.hookBacklog.set({ hook: b.url }, b.backlog);
            opts.metrics.hookOldestSeconds.set({ hook: b.url }, b.oldestCreatedAt === null ? 0 : Math.max(0, (now - b.oldestCreatedAt) / 1000));
          }
        },
      },
    });
    opts.logger.info({ hooks: hooks.map((h) => ({ url: h.url, events: h.events })) }, 'hooks: delivering results');
  };
  await apply(daemon);
  return {
    reload: apply,
    async setSending(on) {
      if (on === sending) return;
      sending = on;
      if (on) await apply(current);
      else {
        await sender?.stop();
        sender = null;
      }
    },
    async stop() {
      await sender?.stop();
      sender = null;
    },
  };
}
