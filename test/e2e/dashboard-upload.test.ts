// Adding leads from the dashboard in a real browser (Chromium from @sparticuz/chromium,
// driven by playwright-core) against a real daemon process and the simulator: a CSV chosen
// in the page's form is imported into a running campaign, the import's summary is shown
// (and stays through the live refresh), the daemon calls the new numbers; the same file
// again adds nothing; a file that is no lead file shows the import's reason; a file over
// the limit is refused by the page before anything is sent.
import type { Browser } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/store/database.js';
import { stopAllProcesses } from '../helpers/processes.js';
import { waitUntil } from '../helpers/wait.js';
import { numbers, type CampaignSpec } from './daemon-fixture.js';
import { DASHBOARD_TOKEN, launchBrowser, startDashboardScenario, type DashboardScenario } from './dashboard-setup.js';

let browser: Browser;
let scenario: DashboardScenario | undefined;
beforeAll(async () => {
  // No skip: a browser that does not start fails the suite.
  browser = await launchBrowser();
}, 60_000);
afterAll(async () => {
  await browser?.close();
});
afterEach(async () => {
  await stopAllProcesses();
  scenario?.ws.cleanup();
  scenario = undefined;
});

async function leadCount(dbPath: string): Promise<number> {
  const store = openDatabase(dbPath, { readonly: true });
  try {
    const row = await store.db.selectFrom('leads').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    return Number(row.n);
  } finally {
    await store.close();
  }
}

describe('the dashboard upload in Chromium', () => {
  it('imports a chosen CSV into a running campaign, shows the summary, and the daemon calls the new numbers', { timeout: 120_000 }, async () => {
    const [first, ...added] = numbers(3, 700);
    // The first lead talks for a while, so the campaign is still running when the file comes.
    const alpha: CampaignSpec = { name: 'alpha', leads: [[first!]], maxParallel: 3, maxRetries: 0, retryInterval: 1 };
    scenario = await startDashboardScenario({
      campaigns: [alpha],
      before: async (sim) => {
        await sim.control('outcomes', { phone_number: first, status: 'completed', answered_by: 'human', duration: 30, count: 1 });
      },
    });
    const { sim, ws, url } = scenario;
    await waitUntil(async () => (await sim.calls()).some((c) => c.client_phone_number === first), { message: "alpha's first call" });

    const page = await (await browser.newContext()).newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(url);
    await page.fill('input[name="token"]', DASHBOARD_TOKEN);
    await Promise.all([page.waitForURL(`${url}/`), page.click('button[type="submit"]')]);
    await page.waitForSelector('#upload');

    const csv = Buffer.from(`phone_number,first_name\n${added[0]},Ada\n${added[1]},Bert\nnot a number,Cleo\n`);
    await page.setInputFiles('#upload-file', { name: 'new leads.csv', mimeType: 'text/csv', buffer: csv });
    await page.selectOption('#upload-campaign', 'alpha');
    await page.click('#upload button[type="submit"]');
    const result = page.locator('#upload-result');
    await waitUntil(async () => (await result.textContent())?.startsWith('Imported') ?? false, { message: 'the import summary on the page' });
    const text = (await result.textContent()) ?? '';
    expect(text).toContain('Imported new leads.csv into campaign "alpha": 2 of 3 rows');
    expect(text).toContain('First problem rows:\n  line 4: not a number:');
    expect(await result.getAttribute('class')).toBe('');
    expect(await leadCount(ws.dbPath)).toBe(4);

    // The daemon calls the new numbers (a free slot, an open window).
    await waitUntil(async () => {
      const called = new Set((await sim.calls()).map((c) => c.client_phone_number));
      return added.every((n) => called.has(n));
    }, { timeoutMs: 15_000, message: 'calls to the uploaded numbers' });

    // The summary stays through the live refresh (it is outside the redrawn campaigns).
    const stamp = await page.locator('#updated').getAttribute('data-at');
    await waitUntil(async () => (await page.locator('#updated').getAttribute('data-at')) !== stamp, { message: 'a refresh' });
    expect(await result.textContent()).toBe(text);

    // The same file again: nothing new.
    await page.setInputFiles('#upload-file', { name: 'new leads.csv', mimeType: 'text/csv', buffer: csv });
    await page.click('#upload button[type="submit"]');
    await waitUntil(async () => (await result.textContent()) !== text && ((await result.textContent())?.startsWith('Imported') ?? false), { message: 'the second summary' });
    expect(await result.textContent()).toContain('Imported new leads.csv into campaign "alpha": 2 of 3 rows');
    expect(await result.textContent()).toMatch(/ {8}0 {2}accepted \(new leads\)/);
    expect(await leadCount(ws.dbPath)).toBe(4);

    // A file that is no lead file: the import's reason, marked as a problem.
    await page.setInputFiles('#upload-file', { name: 'notes.xlsx', mimeType: 'application/octet-stream', buffer: Buffer.from('just some text\n') });
    await page.click('#upload button[type="submit"]');
    await waitUntil(async () => (await result.getAttribute('class')) === 'problem', { message: 'the refusal on the page' });
    expect(await result.textContent()).toMatch(/^notes\.xlsx: the file is named \.xlsx but is not an Excel workbook/);

    // Over the limit: the page says so and sends nothing.
    const sent: string[] = [];
    page.on('request', (r) => {
      if (r.method() === 'POST') sent.push(r.url());
    });
    await page.setInputFiles('#upload-file', { name: 'huge.csv', mimeType: 'text/csv', buffer: Buffer.alloc(10 * 1024 * 1024 + 1, 'a') });
    await page.click('#upload button[type="submit"]');
    await waitUntil(async () => (await result.textContent())?.startsWith('huge.csv is 10.0 MB') ?? false, { message: 'the size refusal' });
    expect(await result.textContent()).toContain('the dashboard takes lead files up to 10 MB');
    expect(sent).toEqual([]);
    expect(await leadCount(ws.dbPath)).toBe(4);
    expect(errors).toEqual([]);
  });
});
