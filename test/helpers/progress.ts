// Where a stack's campaign stands, read from the database: for waiting and for messages.
import type { Kysely } from 'kysely';
import type { Database, LeadState } from '../../src/store/types.js';

const ACTIVE: LeadState[] = ['pending', 'calling', 'retry-scheduled'];

/** True when nothing is left to happen: leads final, no live attempt, no unconfirmed webhook success. */
export async function isQuiet(db: Kysely<Database>): Promise<boolean> {
  const active = await db.selectFrom('leads').select('id').where('state', 'in', ACTIVE).limit(1).executeTakeFirst();
  if (active) return false;
  const live = await db.selectFrom('attempts').select('id').where('state', 'in', ['dialing', 'placed', 'unknown']).limit(1).executeTakeFirst();
  if (live) return false;
  const provisional = await db
    .selectFrom('attempts')
    .select('id')
    .where('state', '=', 'ended')
    .where('outcome_source', '=', 'webhook')
    .where('outcome', '=', 'success')
    .limit(1)
    .executeTakeFirst();
  return provisional === undefined;
}

/** Lead and attempt states, for timeout messages. */
export async function describeProgress(db: Kysely<Database>): Promise<string> {
  const leads = await db.selectFrom('leads').select(['state', (eb) => eb.fn.countAll<number>().as('n')]).groupBy('state').execute();
  const attempts = await db.selectFrom('attempts').select(['state', (eb) => eb.fn.countAll<number>().as('n')]).groupBy('state').execute();
  return `leads ${JSON.stringify(Object.fromEntries(leads.map((r) => [r.state, Number(r.n)])))}, attempts ${JSON.stringify(
    Object.fromEntries(attempts.map((r) => [r.state, Number(r.n)])),
  )}`;
}
