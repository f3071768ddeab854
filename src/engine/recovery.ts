import type { Kysely } from 'kysely';
import type { Logger } from '../log/logger.js';
import { recordEvent } from '../store/events.js';
import type { Database } from '../store/types.js';
import { dialingAttempts, markUnknown } from '../store/attempts.js';
import { requeueOrphanedCallingLeads } from '../store/due-leads.js';

/**
 * At start-up, an attempt still `dialing` belongs to a process that died between
 * committing it and recording the answer: make_call may or may not have gone out.
 * It becomes `unknown`, stays live, and is settled only by the call list (rule 6).
 */
export async function recoverUnfinishedAttempts(
  db: Kysely<Database>,
  opts: { now: number; settleMs: number; owner: string; logger: Logger },
): Promise<number> {
  const stale = await dialingAttempts(db);
  for (const a of stale) {
    await markUnknown(db, a.id, { detail: 'found unfinished at start-up', settleDeadline: opts.now + opts.settleMs, owner: opts.owner });
    await recordEvent(db, { at: opts.now, campaignId: a.campaign_id, leadId: a.lead_id, attemptId: a.id, kind: 'recovered-unknown' });
  }
  if (stale.length > 0) opts.logger.warn({ count: stale.length }, 'attempts found unfinished after a stop; following them as unknown');
  // A lead left `calling` without a live attempt would never be dialled again: put it back.
  const orphanCount = await requeueOrphanedCallingLeads(db, opts.now);
  if (orphanCount > 0) opts.logger.warn({ count: orphanCount }, 'leads left calling without a live attempt were put back');
  return stale.length;
}
