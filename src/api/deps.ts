import type { Kysely } from 'kysely';
import type { Logger } from '../log/logger.js';
import type { Clock } from '../time/clock.js';
import type { Database } from '../store/types.js';

/** What the API's routes may use: given by the composition root (src/app.ts). */
export interface ApiDeps {
  db: Kysely<Database>;
  /**
   * For the lookups of the GET routes, which need no transaction: on SQLite a read-only
   * connection of its own, so that a read never queues behind the engine's or a POST's
   * transaction on the one writing connection (WAL readers do not wait for the writer).
   * Absent: `db`.
   */
  readDb?: Kysely<Database>;
  clock: Clock;
  logger: Logger;
  /** Tells the engine that new work exists (a lead posted, a campaign resumed). */
  wake(): void;
  /** Counts the leads a request stored into a campaign, new rows only (the planner's statistics follow them: src/store/planner-statistics.ts). */
  leadsStored?(campaignId: number, count: number): void;
  /** Checks the request's key for a scope (src/api/auth.ts in the daemon). */
  authorize(authorizationHeader: string | undefined, scope: 'read' | 'write'): Promise<AuthResult>;
  /** This campaignd's version (the status document carries it). */
  version: string;
  hostname: string;
  isPidAlive(pid: number): boolean;
}

export type AuthResult = { ok: true; keyName: string | null } | { ok: false; status: 401 | 403; detail: string };
