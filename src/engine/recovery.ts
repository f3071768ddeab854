import type { Kysely } from 'kysely';
import type { Logger } from '../log/logger.js';
import { recordEvent } from '../store/events.js';
import { LIVE_ATTEMPT_STATES_SQL } from '../store/state-lists.js';
import type { Database } from '../store/types.js';
import { markUnknown } from '../store/attempts.js';

/**
 * At start-up, an attempt still `dialing` belongs to a process that died between
 * committing it and recording the answer: make_call may or may not have gone out.
 * It becomes `unknown`, stays live, and is settled only by the call list (rule 6).
 */
export async function recoverUnfinishedAttempts(
  db: Kysely<Database>,
  opts: { now: number; settleMs: number; owner: string; logger: Logger },
): Promise<number> {
  // Through the partial index of live attempts (the literal list), not a scan of every
  // attempt ever made: at 1M attempts the scan alone filled the page cache at each start.
  const stale = await db
    .selectFrom('attempts')
    .select(['id', 'campaign_id', 'lead_id'])
    .where('state', 'in', LIVE_ATTEMPT_STATES_SQL)
    .where('state', '=', 'dialing')
    .execute();
  for (const a of stale) {
    await markUnknown(db, a.id, { detail: 'found unfinished at start-up', settleDeadline: opts.now + opts.settleMs, owner: opts.owner });
    await recordEvent(db, { at: opts.now, campaignId: a.campaign_id, leadId: a.lead_id, attemptId: a.id, kind: 'recovered-unknown' });
  }
  if (stale.length > 0) opts.logger.warn({ count: stale.length }, 'attempts found unfinished after a stop; following them as unknown');
  // A lead left `calling` without a live attempt (killed between two statements of an
  // older version, or an operator's edit) would never be dialled again: put it back.
  const orphans = await db
    .updateTable('leads')
    .set({ state: 'retry-scheduled', next_due_at: opts.now, updated_at: opts.now, state_reason: 'recovered at start-up' })
    // Campaign by campaign through the (campaign_id, state) index, not a scan of every lead.
    .where('campaign_id', 'in', (eb) => eb.selectFrom('campaigns').select('campaigns.id'))
    .where('state', '=', 'calling')
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom('attempts')
            .select('attempts.id')
            .whereRef('attempts.lead_id', '=', 'leads.id')
            .where('attempts.state', 'in', LIVE_ATTEMPT_STATES_SQL),
        ),
      ),
    )
    .executeTakeFirst();
  const orphanCount = Number(orphans.numUpdatedRows);
  if (orphanCount > 0) opts.logger.warn({ count: orphanCount }, 'leads left calling without a live attempt were put back');
  return stale.length;
}
