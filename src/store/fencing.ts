// A claim refused by the database because the lease it was made under is no longer current
// (migration 0008's trigger on PostgreSQL): the instance lost its role, not its store.

/**
 * SQLSTATE the fencing trigger raises ("CD": campaignd's own class). Migration 0008 keeps its
 * own copy (migrations are frozen; live code does not import them); the PostgreSQL HA test
 * checks that the trigger raises this one.
 */
export const FENCED_SQLSTATE = 'CDL01';

export function isFenced(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === FENCED_SQLSTATE;
}

/**
 * The account whose lease refused a claim (several active instances: migration 0023's
 * trigger names it in the error's detail); undefined for the one lease of ha_lease.
 */
export function fencedAccount(err: unknown): string | undefined {
  if (!isFenced(err)) return undefined;
  const detail = (err as { detail?: unknown }).detail;
  return typeof detail === 'string' && detail !== '' ? detail : undefined;
}
