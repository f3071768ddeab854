import pg from 'pg';
import type { Logger } from '../log/logger.js';
import type { Clock } from '../time/clock.js';
import { redactUrls } from './dialect.js';
import { SLOT_CHANNEL } from './new-work.js';

// LISTEN for freed slots on PostgreSQL (migration 0008 notifies `campaignd_slot` when an
// attempt leaves the live states, whichever instance recorded it), and for leads posted
// through the API on any instance (new-work.ts). The active instance
// wakes its dialer on each, so a webhook that reached a standby refills the slot as fast
// as one that reached the active instance. LISTEN needs a session of its own: a plain
// client beside the pool, reconnected after a failure (the engine's own timers still
// refill slots meanwhile, only later).

/** The channel (new-work.ts): freed slots and leads posted through the API on any instance. The PostgreSQL HA test listens on this one. */
export { SLOT_CHANNEL };

export interface WakeupListener {
  close(): Promise<void>;
}

export interface WakeupOptions {
  url: string;
  password?: string;
  clock: Clock;
  logger: Logger;
  onWake(): void;
}

const RETRY_MIN_MS = 500;
const RETRY_MAX_MS = 30_000;

export function listenForFreedSlots(opts: WakeupOptions): WakeupListener {
  const log = opts.logger.child({ component: 'pg-listen' });
  let client: pg.Client | null = null;
  let closed = false;
  let failures = 0;
  let cancelRetry: (() => void) | null = null;

  async function connect(): Promise<void> {
    if (closed) return;
    const c = new pg.Client({
      connectionString: opts.url,
      ...(opts.password !== undefined ? { password: opts.password } : {}),
      application_name: 'campaignd-listen',
    });
    c.on('notification', (n) => {
      if (n.channel === SLOT_CHANNEL) opts.onWake();
    });
    c.on('error', (err) => retry(err));
    c.on('end', () => retry(new Error('connection ended')));
    client = c;
    try {
      await c.connect();
      await c.query(`LISTEN ${SLOT_CHANNEL}`);
      if (failures > 0) log.info('listening for freed slots again');
      failures = 0;
      // Whatever was freed while not listening: look once.
      opts.onWake();
    } catch (err) {
      retry(err);
    }
  }

  function retry(err: unknown): void {
    if (closed || cancelRetry) return;
    const dead = client;
    client = null;
    dead?.removeAllListeners('end');
    dead?.end().catch(() => undefined);
    failures++;
    const wait = Math.min(RETRY_MAX_MS, RETRY_MIN_MS * 2 ** (failures - 1));
    log.warn({ err: redactUrls(err instanceof Error ? err.message : String(err)), retryInMs: wait }, 'not listening for freed slots; reconnecting');
    cancelRetry = opts.clock.setTimer(wait, () => {
      cancelRetry = null;
      void connect();
    });
  }

  void connect();
  return {
    async close() {
      closed = true;
      cancelRetry?.();
      const c = client;
      client = null;
      if (c) {
        c.removeAllListeners('end');
        c.removeAllListeners('error');
        c.on('error', () => undefined);
        await c.end().catch(() => undefined);
      }
    },
  };
}
