// A `move_to` rule (README, "On the result") ends the source lead `moved` and gives the
// target campaign its lead in the transaction that ended the attempt. These tests hold
// that transaction to its word on both databases: rolled back, nothing of the move is
// left (no moved source, no target lead, no hook event); committed, all of it, once,
// however often the outcome is applied again.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { testCampaignConfig } from '../helpers/campaign-config.js';
import { openTestStore } from '../helpers/test-store.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { upsertCampaign } from '../../src/store/campaigns.js';
import { syncHookSubscriptions } from '../../src/store/hook-outbox.js';
import { leadAfterOutcome, type LeadDecision } from '../../src/store/lead-transitions.js';
import type { DatabaseHandle } from '../../src/store/database.js';
import type { AttemptRow } from '../../src/store/types.js';
import { systemClock } from '../../src/time/clock.js';

const NOW = 1_800_000_000_000;
const PHONE = '+12025550401';

describe('moving a lead to another campaign', () => {
  let h: DatabaseHandle;
  let source: number;
  let target: number;
  let leadId: number;
  beforeEach(async () => {
    h = await openTestStore();
    await migrateToLatest(h.db, { clock: systemClock });
    source = (await upsertCampaign(h.db, testCampaignConfig('main'), { timezone: 'UTC' }, NOW)).id;
    target = (await upsertCampaign(h.db, testCampaignConfig('sales'), { timezone: 'UTC' }, NOW)).id;
    await syncHookSubscriptions(h.db, [{ url: 'http://127.0.0.1:9/hook', events: ['lead.moved', 'lead.final'] }]);
    leadId = (
      await h.db
        .insertInto('leads')
        .values({ campaign_id: source, dedupe_key: PHONE, phone_number: PHONE, variables_json: '{"name":"Ada"}', timezone: 'Europe/Berlin', state: 'calling', state_reason: null, next_due_at: null, remote_lead_id: null, source_file: 'x.csv', source_line: 2, created_at: NOW, updated_at: NOW })
        .returning('id')
        .executeTakeFirstOrThrow()
    ).id;
  });
  afterEach(async () => {
    await h.close();
  });

  // The attempt that ended (no row needed: only its lead and, for a callback it placed, its id are read).
  const attempt = () => ({ id: 1, lead_id: leadId, contact_position: 0 }) as AttemptRow;
  const move: LeadDecision = {
    kind: 'move',
    campaign: 'sales',
    from: 'main',
    phone: PHONE,
    extracted: { interest: 'yes' },
    reason: 'moved to sales by on_result rule 1 (interest = "yes")',
    fallback: { kind: 'complete' },
  };
  const state = async () => ({
    source: await h.db.selectFrom('leads').select(['state', 'state_reason']).where('id', '=', leadId).executeTakeFirstOrThrow(),
    target: await h.db.selectFrom('leads').select(['id', 'state', 'phone_number', 'variables_json', 'timezone']).where('campaign_id', '=', target).execute(),
    events: await h.db.selectFrom('hook_outbox').select(['type', 'lead_id']).execute(),
  });

  it('leaves nothing behind when the transaction does not commit', async () => {
    await expect(
      h.db.transaction().execute(async (trx) => {
        await leadAfterOutcome(trx, attempt(), () => move, NOW + 1000);
        // The process dies here, before the commit: the database never saw any of it.
        throw new Error('crash before commit');
      }),
    ).rejects.toThrow('crash before commit');
    expect(await state()).toEqual({ source: { state: 'calling', state_reason: null }, target: [], events: [] });
  });

  it('commits the source moved, exactly one target lead and one lead.moved event, once', async () => {
    for (let i = 0; i < 3; i++) await h.db.transaction().execute((trx) => leadAfterOutcome(trx, attempt(), () => move, NOW + 1000));
    const after = await state();
    expect(after.target).toHaveLength(1);
    expect(after.target[0]).toMatchObject({ state: 'pending', phone_number: PHONE, timezone: 'Europe/Berlin' });
    expect(JSON.parse(after.target[0]!.variables_json)).toEqual({ name: 'Ada', interest: 'yes' });
    expect(after.source).toEqual({ state: 'moved', state_reason: `${move.reason}; lead ${after.target[0]!.id} there` });
    expect(after.events).toEqual([{ type: 'lead.moved', lead_id: leadId }]);
  });

  it('leaves the lead the target already has for the number as it is, and reads what the move needs in one statement', async () => {
    const existing = (
      await h.db
        .insertInto('leads')
        .values({ campaign_id: target, dedupe_key: PHONE, phone_number: PHONE, variables_json: '{}', timezone: null, state: 'completed', state_reason: null, next_due_at: null, remote_lead_id: null, source_file: 'y.csv', source_line: 9, created_at: NOW, updated_at: NOW })
        .returning('id')
        .executeTakeFirstOrThrow()
    ).id;
    let statements = 0;
    const counted = h.db.withPlugin({ transformQuery: (a) => a.node, transformResult: async (a) => (statements++, a.result) });
    await counted.transaction().execute((trx) => leadAfterOutcome(trx, attempt(), () => move, NOW + 1000));
    // The lead, the move's read, the source's update: on PostgreSQL each a round trip (a lead
    // never given a callback has none to mark placed).
    expect(statements).toBe(3);
    const after = await state();
    expect(after.target).toEqual([expect.objectContaining({ id: existing, state: 'completed', variables_json: '{}' })]);
    expect(after.source).toEqual({ state: 'moved', state_reason: `${move.reason}; the number was already lead ${existing} there, left as it is` });
  });

  it('falls back to the retry settings when the target campaign is not in the store', async () => {
    await h.db.transaction().execute((trx) => leadAfterOutcome(trx, attempt(), () => ({ ...move, campaign: 'gone' }), NOW + 1000));
    const after = await state();
    expect(after.source.state).toBe('completed');
    expect(after.target).toEqual([]);
  });

  it('gives a suppressed number to the target as a suppressed lead', async () => {
    await h.db.insertInto('suppressions').values({ phone_number: PHONE, source: 'file', added_at: NOW }).execute();
    await h.db.transaction().execute((trx) => leadAfterOutcome(trx, attempt(), () => move, NOW + 1000));
    const after = await state();
    expect(after.source.state).toBe('moved');
    expect(after.target.map((t) => t.state)).toEqual(['suppressed']);
  });
});
