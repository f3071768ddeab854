// Leads continued in another campaign by an on_result move_to rule (README, "On the
// result"): counted as `leads.moved` in status --json, and in a MOVED column of the human
// status, which appears only once some campaign has moved leads.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../src/store/database.js';
import { collectStatus } from '../../src/status/collect.js';
import { renderStatus } from '../../src/status/render.js';
import { campaignConfig, createStore, insertCampaign, insertLeads, makeTempConfig } from './status-fixture.js';

const NOW = Date.UTC(2026, 10, 23, 10, 0, 0);
const opts = { now: NOW, version: '9.9.9', isPidAlive: () => true, hostname: 'testhost' };

let tmp: ReturnType<typeof makeTempConfig>;
let store: DatabaseHandle;
let main: number;
beforeEach(async () => {
  tmp = makeTempConfig();
  store = await createStore(tmp.dbPath);
  main = await insertCampaign(store.db, campaignConfig('main'));
  await insertLeads(store.db, main, 'pending', 3);
  await insertLeads(store.db, main, 'completed', 1);
});
afterEach(async () => {
  await store.close();
  tmp.cleanup();
});

describe('status: moved leads', () => {
  it('has no MOVED column while no lead was moved', async () => {
    const report = await collectStatus(store.db, opts);
    expect(report.campaigns[0]?.leads).toMatchObject({ moved: 0, total: 4 });
    expect(renderStatus(report, { now: NOW, color: false })).not.toContain('MOVED');
  });

  it('counts moved leads in leads.moved and the total, and shows them in a MOVED column', async () => {
    await insertLeads(store.db, main, 'moved', 2);
    const report = await collectStatus(store.db, opts);
    expect(report.campaigns[0]?.leads).toMatchObject({ moved: 2, completed: 1, pending: 3, total: 6 });
    const lines = renderStatus(report, { now: NOW, color: false }).split('\n');
    const header = lines.find((l) => l.startsWith('CAMPAIGN'))!;
    const row = lines.find((l) => l.startsWith('main'))!;
    const cells = row.split(/\s{2,}/);
    const columns = header.split(/\s{2,}/);
    expect(columns.slice(columns.indexOf('SUPPR'), columns.indexOf('SUPPR') + 4)).toEqual(['SUPPR', 'CANCEL', 'MOVED', 'TOTAL']);
    expect(cells[columns.indexOf('MOVED')]).toBe('2');
    expect(cells[columns.indexOf('TOTAL')]).toBe('6');
  });
});
