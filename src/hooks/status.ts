import type { Kysely } from 'kysely';
import { hasMigration } from '../store/migrate.js';
import type { Database } from '../store/types.js';
import { hookBacklogs } from '../store/hook-outbox.js';

// The hooks part of `campaignd status`: per hook, what waits to be delivered.

/** One hook in `status --json` (`hooks`). */
export interface HookStatus {
  url: string;
  /** Events not delivered yet. */
  backlog: number;
  /** Age of the oldest undelivered event, in seconds; null when none. */
  oldest_undelivered_seconds: number | null;
  /** Undelivered events that failed at least once (the receiver is failing). */
  failing: number;
  /** Set when the hook answered 410 Gone: nothing more is sent to it. */
  disabled: { at: string; reason: string | null } | null;
}

/** Every hook with a backlog or disabled; empty on a database from before hooks. */
export async function collectHookStatus(db: Kysely<Database>, now: number): Promise<HookStatus[]> {
  if (!(await hasMigration(db, '0007_hooks'))) return [];
  return (await hookBacklogs(db)).map((b) => ({
    url: b.url,
    backlog: b.backlog,
    oldest_undelivered_seconds: b.oldestCreatedAt === null ? null : Math.max(0, Math.round((now - b.oldestCreatedAt) / 1000)),
    failing: b.failing,
    disabled: b.disabledAt === null ? null : { at: new Date(b.disabledAt).toISOString(), reason: b.disabledReason },
  }));
}

/** Human lines for `campaignd status`: one per hook. */
export function renderHookLines(hooks: readonly HookStatus[]): string[] {
  return hooks.map((h) => {
    if (h.disabled) return `hook ${h.url}: DISABLED since ${h.disabled.at} (${h.disabled.reason ?? 'no reason'}); remove it from hooks: and reload to send again`;
    const age = h.oldest_undelivered_seconds === null ? '' : `, oldest ${formatAge(h.oldest_undelivered_seconds)}`;
    return `hook ${h.url}: ${h.backlog} undelivered${age}${h.failing > 0 ? `, ${h.failing} failing (retried with backoff)` : ''}`;
  });
}

function formatAge(seconds: number): string {
  if (seconds < 120) return `${seconds} s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)} min`;
  return `${(seconds / 3600).toFixed(1)} h`;
}
