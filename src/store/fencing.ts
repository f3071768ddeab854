import { FENCED_SQLSTATE } from '../../migrations/0008_ha_lease.js';

// A claim refused by the database because the lease it was made under is no longer current
// (migration 0008's trigger on PostgreSQL): the instance lost its role, not its store.

export function isFenced(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === FENCED_SQLSTATE;
}
