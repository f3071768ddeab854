// Leads posted as JSON items (the API's POST /campaigns/{name}/leads, below HTTP): the same
// rules as a lead file, one transaction per request, external ids, Idempotency-Key.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { importLeads } from '../../src/leads/import.js';
import { importLeadItems, type ItemOutcome } from '../../src/leads/import-items.js';
import type { LeadItem } from '../../src/leads/lead-items.js';
import { IDEMPOTENCY_TTL_MS, IdempotencyKeyReused, postLeads } from '../../src/leads/post-leads.js';
import { readLeadFile } from '../../src/leads/read-leads.js';
import { upsertCampaign } from '../../src/store/campaigns.js';
import { claimIdempotencyKey, IdempotencyKeyHeld } from '../../src/store/idempotency.js';
import type { DatabaseHandle } from '../../src/store/database.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { syncSuppressions } from '../../src/store/suppressions.js';
import { testCampaignConfig } from '../helpers/campaign-config.js';
import { openTestStore, testDialect } from '../helpers/test-store.js';

let handle: DatabaseHandle;
let dir: string;
let fileCampaign: number;
let apiCampaign: number;

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'campaignd-items-'));
  // Two connections on PostgreSQL, so that two requests can really run at once there.
  handle = await openTestStore({ maxConnections: 2 });
  await migrateToLatest(handle.db, { clock: { now: () => 0 } });
  fileCampaign = (await upsertCampaign(handle.db, testCampaignConfig('from-file'), { timezone: 'UTC' }, 1)).id;
  apiCampaign = (await upsertCampaign(handle.db, testCampaignConfig('from-api'), { timezone: 'UTC' }, 1)).id;
});
afterEach(async () => {
  await handle.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const api = (id = apiCampaign, allowDuplicates = false) => ({ id, allowDuplicates, defaultCountry: 'US' });

async function stored(campaignId: number) {
  const rows = await handle.db.selectFrom('leads').selectAll().where('campaign_id', '=', campaignId).orderBy('id').execute();
  const contacts = await handle.db.selectFrom('lead_contacts').select(['lead_id', 'phone_number']).orderBy('lead_id').orderBy('position').execute();
  return rows.map((r) => ({
    phone: r.phone_number,
    state: r.state,
    reason: r.state_reason,
    variables: JSON.parse(r.variables_json) as unknown,
    timezone: r.timezone,
    contacts: contacts.filter((c) => c.lead_id === r.id).map((c) => c.phone_number),
    externalId: r.external_id,
  }));
}

async function count(table: 'leads' | 'api_idempotency'): Promise<number> {
  const row = await handle.db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

const tally = (outcomes: ItemOutcome[]) => {
  const t: Record<string, number> = {};
  for (const o of outcomes) t[o.outcome] = (t[o.outcome] ?? 0) + 1;
  return t;
};

describe(`leads posted as items (${testDialect})`, () => {
  it('gives the same outcomes and stores the same leads as the same rows in a lead file', async () => {
    await syncSuppressions(handle.db, ['+15555550104'], 1);
    const file = path.join(dir, 'leads.csv');
    fs.writeFileSync(
      file,
      [
        'phone_number,first_name,timezone,secondary_phone_number_1,secondary_phone_number_2',
        '+15555550100,Ada,America/New_York,+15555550900,',
        '(555) 555-0101,Ben,,,',
        '12345,Cleo,,,',
        '+15555550100,Ada again,,,',
        '+15555550102,Dev,Nowhere/Zone,,',
        '+15555550103,Eve,,+15555550901,not a number',
        '+15555550104,Fay,,,',
      ].join('\n'),
    );
    const items: LeadItem[] = [
      { phone_number: '+15555550100', variables: { first_name: 'Ada' }, timezone: 'America/New_York', secondary_phone_numbers: ['+15555550900'] },
      { phone_number: '(555) 555-0101', variables: { first_name: 'Ben' } },
      { phone_number: '12345', variables: { first_name: 'Cleo' } },
      { phone_number: '+15555550100', variables: { first_name: 'Ada again' } },
      { phone_number: '+15555550102', variables: { first_name: 'Dev' }, timezone: 'Nowhere/Zone' },
      { phone_number: '+15555550103', variables: { first_name: 'Eve' }, secondary_phone_numbers: ['+15555550901', 'not a number'] },
      { phone_number: '+15555550104', variables: { first_name: 'Fay' } },
    ];
    const summary = await importLeads(handle.db, api(fileCampaign), readLeadFile(file, { defaultCountry: 'US' }), { now: 10, sourceFile: file });
    const outcomes = await importLeadItems(handle.db, api(), items, { now: 10 });
    expect(tally(outcomes)).toEqual({ accepted: 3, invalid: 2, duplicate: 1, suppressed: 1 });
    expect(summary).toMatchObject({ accepted: 3, invalid: 2, duplicates: 1, suppressed: 1 });
    expect(await stored(apiCampaign)).toEqual(await stored(fileCampaign));
    expect(outcomes.map((o) => [o.outcome, o.reason])).toEqual([
      ['accepted', null],
      ['accepted', null],
      ['invalid', summary.samples[0]!.message.replace(/^12345: /, '')],
      ['duplicate', 'same number as item 0'],
      ['invalid', 'unknown timezone "Nowhere/Zone"'],
      ['accepted', 'secondary_phone_numbers[1] skipped: not a phone number'],
      ['suppressed', 'on the suppression list'],
    ]);
    // The duplicate names the lead it repeats; every stored lead has its id.
    expect(outcomes[3]!.id).toBe(outcomes[0]!.id);
    expect(outcomes.every((o) => typeof o.id === 'number')).toBe(true);

    // Posted again: nothing new, as a file imported again.
    const again = await importLeadItems(handle.db, api(), items, { now: 20 });
    expect(tally(again)).toEqual({ unchanged: 4, invalid: 2, duplicate: 1 });
  });

  it('updates a lead by its external_id while it is not called, and leaves it once called', async () => {
    const [first] = await importLeadItems(handle.db, api(), [{ phone_number: '+15555550100', external_id: 'crm-1', variables: { plan: 'basic', age: 41 } }], { now: 10 });
    expect(first).toMatchObject({ outcome: 'accepted', external_id: 'crm-1' });
    const same = await importLeadItems(handle.db, api(), [{ phone_number: '+1 555 555 0100', external_id: 'crm-1', variables: { plan: 'basic', age: '41' } }], { now: 20 });
    expect(same[0]).toMatchObject({ id: first!.id, outcome: 'unchanged' });
    const moved = await importLeadItems(handle.db, api(), [{ phone_number: '+15555550199', external_id: 'crm-1', variables: { plan: 'gold' }, timezone: 'Europe/Berlin' }], { now: 30 });
    expect(moved[0]).toMatchObject({ id: first!.id, outcome: 'updated' });
    expect(await stored(apiCampaign)).toEqual([{ phone: '+15555550199', state: 'pending', reason: null, variables: { plan: 'gold' }, timezone: 'Europe/Berlin', contacts: [], externalId: 'crm-1' }]);
    // The old number is free again: another lead may take it.
    const other = await importLeadItems(handle.db, api(), [{ phone_number: '+15555550100', external_id: 'crm-2' }], { now: 40 });
    expect(other[0]).toMatchObject({ outcome: 'accepted' });
    // A number another lead has: a duplicate, nothing changed.
    const clash = await importLeadItems(handle.db, api(), [{ phone_number: '+15555550100', external_id: 'crm-1' }], { now: 50 });
    expect(clash[0]).toMatchObject({ id: other[0]!.id, outcome: 'duplicate', reason: `same number as lead ${other[0]!.id} (external_id "crm-2"); the lead with this external_id is left as it is` });
    // Called: left as it is, and the reason says so.
    await handle.db.updateTable('leads').set({ state: 'retry-scheduled' }).where('id', '=', first!.id!).execute();
    const late = await importLeadItems(handle.db, api(), [{ phone_number: '+15555550177', external_id: 'crm-1', variables: { plan: 'none' } }], { now: 60 });
    expect(late[0]).toMatchObject({ id: first!.id, outcome: 'unchanged', reason: 'already called (state retry-scheduled): left as it is' });
    expect((await stored(apiCampaign))[0]).toMatchObject({ phone: '+15555550199', variables: { plan: 'gold' } });
  });

  it('names a lead from a file by the external_id posted with its number; refuses a second external_id for it', async () => {
    await importLeadItems(handle.db, api(), [{ phone_number: '+15555550100', variables: { a: '1' } }], { now: 10 });
    const named = await importLeadItems(handle.db, api(), [{ phone_number: '+15555550100', external_id: 'crm-9', variables: { a: '1' } }], { now: 20 });
    expect(named[0]).toMatchObject({ outcome: 'updated', external_id: 'crm-9' });
    expect((await stored(apiCampaign))[0]).toMatchObject({ externalId: 'crm-9' });
    const second = await importLeadItems(handle.db, api(), [{ phone_number: '+15555550100', external_id: 'crm-10' }], { now: 30 });
    expect(second[0]).toMatchObject({ id: named[0]!.id, outcome: 'duplicate' });
    // Within one request: the same external_id twice is a duplicate of the first.
    const twice = await importLeadItems(handle.db, api(), [{ phone_number: '+15555550101', external_id: 'x' }, { phone_number: '+15555550102', external_id: 'x' }], { now: 40 });
    expect(twice.map((o) => [o.outcome, o.reason])).toEqual([['accepted', null], ['duplicate', 'same external_id as item 0']]);
    expect(twice[1]!.id).toBe(twice[0]!.id);
  });

  it('keeps an invalid item with its external_id, and a fixed one makes that same lead callable', async () => {
    const [bad] = await importLeadItems(handle.db, api(), [{ phone_number: 'call me', external_id: 'crm-3' }], { now: 10 });
    expect(bad).toMatchObject({ outcome: 'invalid', reason: 'not a phone number' });
    const [fixed] = await importLeadItems(handle.db, api(), [{ phone_number: '+15555550100', external_id: 'crm-3' }], { now: 20 });
    expect(fixed).toMatchObject({ id: bad!.id, outcome: 'updated' });
    expect(await stored(apiCampaign)).toEqual([{ phone: '+15555550100', state: 'pending', reason: null, variables: {}, timezone: null, contacts: [], externalId: 'crm-3' }]);
    const due = await handle.db.selectFrom('leads').select(['next_due_at', 'dedupe_key']).where('id', '=', bad!.id!).executeTakeFirstOrThrow();
    expect(due).toEqual({ next_due_at: 20, dedupe_key: '+15555550100' });
    // An invalid item never spoils a stored lead.
    const [spoil] = await importLeadItems(handle.db, api(), [{ phone_number: '', external_id: 'crm-3' }], { now: 30 });
    expect(spoil).toMatchObject({ id: bad!.id, outcome: 'invalid' });
    expect((await stored(apiCampaign))[0]).toMatchObject({ phone: '+15555550100', state: 'pending' });
  });

  it('a lead moved to another number by its external_id keeps the request from reusing its old number', async () => {
    const [first] = await importLeadItems(handle.db, api(), [{ phone_number: '+15555550100', external_id: 'm' }], { now: 10 });
    const moved = await importLeadItems(handle.db, api(), [{ phone_number: '+15555550100', variables: { who: 'other' } }, { phone_number: '+15555550101', external_id: 'm' }], { now: 20 });
    expect(moved.map((o) => [o.id, o.outcome])).toEqual([
      [first!.id, 'duplicate'],
      [first!.id, 'updated'],
    ]);
    expect(await stored(apiCampaign)).toEqual([{ phone: '+15555550101', state: 'pending', reason: null, variables: {}, timezone: null, contacts: [], externalId: 'm' }]);
    // The old number is free once that request is written.
    const [again] = await importLeadItems(handle.db, api(), [{ phone_number: '+15555550100' }], { now: 30 });
    expect(again).toMatchObject({ outcome: 'accepted' });
  });

  it('with allow_duplicates: one lead per item, and an external_id still names its lead; a new number on the list suppresses it', async () => {
    const dup = api(apiCampaign, true);
    const first = await importLeadItems(handle.db, dup, [{ phone_number: '+15555550100', external_id: 'a' }, { phone_number: '+15555550100', external_id: 'b' }, { phone_number: '+15555550100' }], { now: 10 });
    expect(first.map((o) => o.outcome)).toEqual(['accepted', 'accepted', 'accepted']);
    expect(new Set(first.map((o) => o.id)).size).toBe(3);
    await syncSuppressions(handle.db, ['+15555550123'], 1);
    const moved = await importLeadItems(handle.db, dup, [{ phone_number: '+15555550123', external_id: 'a' }], { now: 20 });
    expect(moved[0]).toMatchObject({ id: first[0]!.id, outcome: 'suppressed', reason: 'on the suppression list' });
    expect((await stored(apiCampaign)).map((l) => [l.externalId, l.phone, l.state])).toEqual([
      ['a', '+15555550123', 'suppressed'],
      ['b', '+15555550100', 'pending'],
      [null, '+15555550100', 'pending'],
    ]);
  });

  it('writes nothing when the request fails part way (one transaction)', async () => {
    const items = Array.from({ length: 50 }, (_, i) => ({ phone_number: `+1555555${String(1000 + i)}` }));
    await expect(
      importLeadItems(handle.db, api(), items, {
        now: 10,
        after: async () => {
          throw new Error('disk full');
        },
      }),
    ).rejects.toThrow('disk full');
    expect(await count('leads')).toBe(0);
  });

  it('takes 10,000 items in one request', async () => {
    const items = Array.from({ length: 10_000 }, (_, i) => ({ phone_number: `+1555${String(2000000 + i)}`, external_id: `c${i}`, variables: { n: i } }));
    const started = performance.now();
    const outcomes = await importLeadItems(handle.db, api(), items, { now: 10 });
    const ms = performance.now() - started;
    expect(tally(outcomes)).toEqual({ accepted: 10_000 });
    expect(new Set(outcomes.map((o) => o.id)).size).toBe(10_000);
    expect(await count('leads')).toBe(10_000);
    // The ids follow the items' order, and each outcome names its item's lead.
    const lead = await handle.db.selectFrom('leads').select(['phone_number', 'external_id']).where('id', '=', outcomes[1234]!.id!).executeTakeFirstOrThrow();
    expect(lead).toEqual({ phone_number: '+15552001234', external_id: 'c1234' });
    // The API's budget is 0.5 s for 10,000 leads over HTTP; the store's part must leave room.
    expect(ms).toBeLessThan(5000);
    const again = await importLeadItems(handle.db, api(), items, { now: 20 });
    expect(tally(again)).toEqual({ unchanged: 10_000 });
  });
});

describe(`Idempotency-Key (${testDialect})`, () => {
  const answer = (outcomes: ItemOutcome[]) => ({ status: 200, body: { items: outcomes } });
  const key = (k: string, hash = 'h1') => ({ owner: 'crm', key: k, requestHash: hash });
  const items: LeadItem[] = [{ phone_number: '+15555550100', variables: { a: '1' } }, { phone_number: '+15555550101' }];

  it('answers a retry with the first answer and writes nothing twice', async () => {
    const first = await postLeads(handle.db, api(), items, { now: 10, idempotency: key('k1'), answer });
    expect(first.replayed).toBe(false);
    expect(await count('leads')).toBe(2);
    // Meanwhile the lead changed: a replay still answers what the first request did.
    await handle.db.updateTable('leads').set({ variables_json: '{"a":"2"}' }).execute();
    const retry = await postLeads(handle.db, api(), items, { now: 20, idempotency: key('k1'), answer });
    expect(retry).toEqual({ status: 200, body: first.body, replayed: true });
    expect(await count('leads')).toBe(2);
    expect(JSON.parse((await handle.db.selectFrom('leads').select('variables_json').orderBy('id').executeTakeFirstOrThrow()).variables_json)).toEqual({ a: '2' });
  });

  it('refuses the same key for another request, and keeps keys of different owners apart', async () => {
    await postLeads(handle.db, api(), items, { now: 10, idempotency: key('k1'), answer });
    await expect(postLeads(handle.db, api(), [{ phone_number: '+15555550109' }], { now: 20, idempotency: key('k1', 'h2'), answer })).rejects.toBeInstanceOf(IdempotencyKeyReused);
    expect(await count('leads')).toBe(2);
    const otherOwner = await postLeads(handle.db, api(), [{ phone_number: '+15555550109' }], { now: 20, idempotency: { owner: 'web', key: 'k1', requestHash: 'h2' }, answer });
    expect(otherOwner.replayed).toBe(false);
  });

  it('two identical requests at once: one writes, the other answers with its answer', async () => {
    const many = Array.from({ length: 500 }, (_, i) => ({ phone_number: `+1555${String(3000000 + i)}` }));
    const [a, b] = await Promise.all([
      postLeads(handle.db, api(), many, { now: 10, idempotency: key('same'), answer }),
      postLeads(handle.db, api(), many, { now: 10, idempotency: key('same'), answer }),
    ]);
    expect([a.replayed, b.replayed].sort()).toEqual([false, true]);
    expect(a.body).toEqual(b.body);
    expect(await count('leads')).toBe(500);
    expect(await count('api_idempotency')).toBe(1);
  });

  it('keeps an answer 24 hours, then runs the request afresh and sweeps the old answers', async () => {
    await postLeads(handle.db, api(), items, { now: 10, idempotency: key('k1'), answer });
    await postLeads(handle.db, api(), items, { now: 10, idempotency: key('k2'), answer });
    const later = 10 + IDEMPOTENCY_TTL_MS;
    const afresh = await postLeads(handle.db, api(), items, { now: later, idempotency: key('k1', 'h2'), answer });
    expect(afresh.replayed).toBe(false);
    expect((afresh.body as { items: ItemOutcome[] }).items.map((o) => o.outcome)).toEqual(['unchanged', 'unchanged']);
    expect(await count('api_idempotency')).toBe(1);
  });

  it('a key whose answer ran out, not yet swept, is taken over; a live one is held', async () => {
    const claim = (now: number, requestHash: string) => handle.db.transaction().execute((trx) => claimIdempotencyKey(trx, { owner: 'crm', key: 'k', requestHash, now, expiresAt: now + 100 }));
    await claim(10, 'h1');
    await expect(claim(50, 'h2')).rejects.toBeInstanceOf(IdempotencyKeyHeld);
    await claim(110, 'h3');
    expect(await handle.db.selectFrom('api_idempotency').select(['request_hash', 'created_at', 'expires_at']).execute()).toEqual([{ request_hash: 'h3', created_at: 110, expires_at: 210 }]);
  });

  it('a failed request keeps no answer: its retry runs afresh', async () => {
    await expect(postLeads(handle.db, api(), items, { now: 10, idempotency: key('k1'), answer: () => { throw new Error('boom'); } })).rejects.toThrow('boom');
    expect(await count('api_idempotency')).toBe(0);
    const retry = await postLeads(handle.db, api(), items, { now: 20, idempotency: key('k1'), answer });
    expect(retry.replayed).toBe(false);
    expect(await count('leads')).toBe(2);
  });
});
