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
  opts: {
    now: number;
    settleMs: number;
    owner: string;
    logger: Logger;
    /**
     * Several active instances: only what the previous holders of this account left, at its
     * taking under `fence` (the other accounts' calls in flight belong to live instances).
     */
    account?: { name: string; fence: number; campaigns?: readonly number[] | undefined };
  },
): Promise<number> {
  const stale = await dialingAttempts(db, opts.account && { account: opts.account.name, olderThan: opts.account.fence });
  const detail = opts.account ? `left unfinished by the previous holder of account ${opts.account.name}` : 'found unfinished at start-up';
  // One transaction for them all: one commit each, two per attempt, made a taking of an
  // account that a killed instance left with 26 calls in flight wait for 52 disk syncs,
  // and a restart's takings of 67 such accounts for minutes (3 instances, 200 accounts).
  if (stale.length > 0) {
    await db.transaction().execute(async (trx) => {
      for (const a of stale) {
        await markUnknown(trx, a.id, { detail, settleDeadline: opts.now + opts.settleMs, owner: opts.owner });
        await recordEvent(trx, { at: opts.now, campaignId: a.campaign_id, leadId: a.lead_id, attemptId: a.id, kind: 'recovered-unknown' });
      }
    });
  }
  if (stale.length > 0) opts.logger.warn({ count: stale.length }, 'attempts found unfinished after a stop; following them as unknown');
  // A lead left `calling` without a live attempt would never be dialled again: put it back.
  // Taking an account, only its own campaigns' leads: the others belong to live instances,
  // and an UPDATE over every campaign waited for every instance's transactions on their
  // leads (3 instances, 200 accounts: the takings of a restart took over a minute).
  const orphanCount = await requeueOrphanedCallingLeads(db, opts.now, opts.account?.campaigns);
  if (orphanCount > 0) opts.logger.warn({ count: orphanCount }, 'leads left calling without a live attempt were put back');
  return stale.length;
}
