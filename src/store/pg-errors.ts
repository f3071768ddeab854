// PostgreSQL's error codes (SQLSTATE) that the store acts on, and how to read one off an error.

/** lock_not_available: a lock not granted within lock_timeout. */
export const LOCK_NOT_AVAILABLE = '55P03';
/** deadlock_detected: the server ended one side of a deadlock. */
export const DEADLOCK_DETECTED = '40P01';
/** insufficient_privilege: e.g. pg_terminate_backend on another role's session. */
export const INSUFFICIENT_PRIVILEGE = '42501';

/** The SQLSTATE of a PostgreSQL error (pg's `code`); undefined for anything else. */
export function sqlState(err: unknown): unknown {
  return (err as { code?: unknown } | null)?.code;
}
