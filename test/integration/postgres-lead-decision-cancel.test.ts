// A lead's next step after its call, decided while the API cancels it from another connection
// (PostgreSQL only: on SQLite one writer serialises the two; test/suites/files.ts). The
// decision reads the lead and writes its next state in one transaction; a cancel committed
// in between must not be overwritten, or a cancelled person is put back to retry and
// called again. The read locks the row (lead-transitions.ts), so the cancel waits for the
// decision and cancels the lead as decided.
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { importLeads } from '../../src/leads/import.js';
import type { ReadLeadResult } from '../../src/leads/read-leads.js';
import { claimAttempts, markEnded } from '../../src/store/attempts.js';
import { upsertCampaign } from '../../src/store/campaigns.js';
import type { DatabaseHandle } from '../../src/store/database.js';
import { cancelLead, type CancelResult } from '../../src/store/lead-cancel.js';
import { leadAfterOutcome } from '../../src/store/lead-transitions.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { testCampaignConfig } from '../helpers/campaign-config.js';
import { openPostgresSessions } from '../helpers/test-store.js';

const NOW = Date.UTC(2026, 0, 5, 10, 0, 0);
const PHONE = '+12025552000';
/** The engine's store (its decisions) and the API's (its cancels): two connections, as in the daemon. */
let engine: DatabaseHandle;
let api: DatabaseHandle;
/** A third connection, to watch the other two. */
let watcher: DatabaseHandle;
let close: () => Promise<void>;

beforeEach(async () => {
  const sessions = await openPostgresSessions(3);
  [engine, api, watcher] = sessions.stores as [DatabaseHandle, DatabaseHandle, DatabaseHandle];
  close = sessions.close;
  await migrateToLatest(engine.db, { clock: { now: () => NOW } });
});

afterEach(async () => close());

async function* oneLead(): AsyncGenerator<ReadLeadResult> {
  yield { ok: true, line: 2, lead: { phoneNumber: PHONE, secondary: [], variables: {} } };
}

/** Resolves once some session of this database waits for a row lock. */
async function someoneWaitsForALock(): Promise<'waiting'> {
  for (;;) {
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`.execute(watcher.db);
    if (rows[0]!.n > 0) return 'waiting';
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describe('a lead decided while it is cancelled', () => {
  it('ends cancelled: the cancel waits for the decision instead of being overwritten by it', async () => {
    const campaign = await upsertCampaign(engine.db, testCampaignConfig('race', { maxRetries: 3, retryOn: ['busy'] }), { timezone: 'UTC' }, NOW);
    await importLeads(engine.db, { id: campaign.id, allowDuplicates: false }, oneLead(), { now: NOW, sourceFile: '/x/race.csv' });
    const lead = await engine.db.selectFrom('leads').select('id').executeTakeFirstOrThrow();
    const [claim] = await claimAttempts(engine.db, [{ campaignId: campaign.id, leadId: lead.id, contactPosition: 0, phoneNumber: PHONE, assistantId: 1, owner: 'test', now: NOW + 1 }]);
    if (!claim?.ok) throw new Error('the claim was refused');

    // A busy call, retried in two minutes; the API's DELETE arrives once the lead was read.
    let cancel: Promise<CancelResult> | undefined;
    const settled = await engine.db.transaction().execute(async (trx) => {
      await markEnded(trx, claim.attempt.id, { callStatus: 'busy', answeredBy: null, outcome: 'busy', source: 'webhook', endedAt: NOW + 60_000 });
      const decision = await leadAfterOutcome(
        trx,
        claim.attempt,
        () => {
          cancel = cancelLead(api.db, lead.id, { now: NOW + 60_001 });
          return { kind: 'retry', nextDueAt: NOW + 180_000 };
        },
        NOW + 60_000,
      );
      expect(decision).toMatchObject({ kind: 'retry' });
      // Before this transaction commits, the cancel has either committed (it did not wait)
      // or waits for a lock this transaction holds.
      return Promise.race([cancel!.then(() => 'committed' as const), someoneWaitsForALock()]);
    });
    expect(settled).toBe('waiting');
    expect(await cancel).toMatchObject({ kind: 'cancelled' });
    const after = await engine.db.selectFrom('leads').select(['state', 'next_due_at']).where('id', '=', lead.id).executeTakeFirstOrThrow();
    expect(after).toEqual({ state: 'cancelled', next_due_at: null });
  });
});
