// The dashboard with 100 campaigns in Chromium (@sparticuz/chromium, playwright-core): it
// opens on the overview, one row per campaign, a page a person can scan rather than
// 14,000 px of cards; filters and sorting work and survive the live refresh; a row opens
// its card beneath it, whose Pause returns to the same view; times read as said, in the
// campaign's zone and the viewer's. The store and server: test/e2e/dashboard-many.ts.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from './dashboard-setup.js';
import { manyCampaigns, MANY_TOKEN, startManyDashboard, type ManyDashboard } from './dashboard-many.js';

let browser: Browser;
let dash: ManyDashboard;
beforeAll(async () => {
  // No skip: a browser that does not start fails the suite.
  browser = await launchBrowser();
  dash = await startManyDashboard();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await dash?.close();
});

const rows = (page: Page): Promise<string[]> => page.locator('tr.c-row').evaluateAll((els) => els.map((e) => e.getAttribute('data-campaign') ?? ''));

describe('the dashboard overview of 100 campaigns in Chromium', () => {
  it('lists, filters, sorts and opens campaigns, with times said in both zones', { timeout: 120_000 }, async () => {
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 }, timezoneId: 'Europe/Paris' });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(dash.url);
    await page.fill('input[name="token"]', MANY_TOKEN);
    await Promise.all([page.waitForURL(`${dash.url}/`), page.click('button[type="submit"]')]);
    await page.waitForSelector('tr.c-row');

    // One row per campaign, by name; no card until one is opened; far shorter than cards.
    const all = manyCampaigns();
    expect(await rows(page)).toEqual(all.map((c) => c.name).sort());
    expect(await page.locator('article.campaign').count()).toBe(0);
    const height = await page.evaluate('document.documentElement.scrollHeight');
    expect(height).toBeLessThan(3_600);

    // Times as said: "closes Thu 23:59 New York · 05:59 yours", never an ISO stamp.
    const text = await page.locator('#campaigns').innerText();
    expect(text).not.toMatch(/\d{4}-\d\d-\d\dT\d\d/);
    const ny = page.locator('tr.c-row', { has: page.locator('time', { hasText: 'New York' }) }).first().locator('td.window');
    const at = (await ny.locator('time').getAttribute('datetime'))!;
    const said = (zone: string): { weekday: string; time: string } => {
      const p = Object.fromEntries(new Intl.DateTimeFormat('en-GB', { timeZone: zone, weekday: 'short', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).formatToParts(new Date(at)).map((x) => [x.type, x.value]));
      return { weekday: p.weekday!, time: `${p.hour}:${p.minute}` };
    };
    const theirs = said('America/New_York');
    const mine = said('Europe/Paris');
    expect(await ny.innerText()).toBe(`${/^open/.test(await ny.innerText()) ? 'open, closes' : 'closed, opens'} ${theirs.weekday} ${theirs.time} New York · ${mine.weekday === theirs.weekday ? '' : `${mine.weekday} `}${mine.time} yours`);

    // Problems only: the campaigns with a problem, each showing it.
    const problems = all.filter((c) => c.problem).map((c) => c.name).sort();
    expect(problems.length).toBeGreaterThan(0);
    await Promise.all([page.waitForURL(/show=problems/), page.click('a.f-problems')]);
    expect(await rows(page)).toEqual(problems);
    for (const t of await page.locator('tr.c-row td.problem').allInnerTexts()) expect(t).toContain('not found');
    // Running only.
    await Promise.all([page.waitForURL(/show=running/), page.click('a.f-running')]);
    expect(await rows(page)).toEqual(all.filter((c) => c.state === 'running').map((c) => c.name).sort());

    // Sorted by finish estimate: ascending, campaigns without one last; then descending.
    await Promise.all([page.waitForURL(/sort=finish/), page.click('th >> text=Finish')]);
    const finishes = async (): Promise<(number | null)[]> =>
      page.locator('tr.c-row td.finish').evaluateAll((tds) => tds.map((td) => { const t = td.querySelector('time'); return t ? Date.parse(t.getAttribute('datetime')!) : null; }));
    const asc = await finishes();
    const known = asc.filter((v): v is number => v !== null);
    expect(known.length).toBeGreaterThan(5);
    expect(asc.slice(0, known.length)).toEqual([...known].sort((a, b) => a - b));
    await Promise.all([page.waitForURL(/dir=desc/), page.click('th >> text=Finish')]);
    expect((await finishes()).slice(0, known.length)).toEqual([...known].sort((a, b) => b - a));

    // The live refresh keeps the view (the refresh asks for the same rows in the same order).
    const order = await rows(page);
    await page.evaluate('window.marker = 7');
    await page.waitForResponse((r) => r.url().includes('/dashboard/status.json?') && r.url().includes('sort=finish'));
    await page.waitForTimeout(50);
    expect(await rows(page)).toEqual(order);
    expect(await page.evaluate('window.marker')).toBe(7);

    // A row opens its card beneath it (a click anywhere on the row); its Pause returns to this view.
    const name = order[1]!;
    await Promise.all([page.waitForURL(/open=/), page.locator(`tr.c-row[data-campaign="${name}"] td.progress`).click()]);
    expect(new URL(page.url()).searchParams.get('open')).toBe(name);
    const card = page.locator(`tr.card-row article.campaign[data-campaign="${name}"]`);
    await expect(card.count()).resolves.toBe(1);
    await expect(card.locator('svg.hours rect.col').count()).resolves.toBe(24);
    const view = new URL(page.url()).search;
    await Promise.all([page.waitForURL((u) => u.search === view && u.pathname === '/'), card.locator('button.pause').click()]);
    await expect(page.locator(`tr.c-row[data-campaign="${name}"] .state`).textContent()).resolves.toBe('paused');
    expect(new URL(page.url()).hash).toBe('#open');
    // Closing it: its row's link again.
    await Promise.all([page.waitForURL((u) => !u.search.includes('open=')), page.locator(`tr.c-row[data-campaign="${name}"] td.name a`).click()]);
    expect(await page.locator('article.campaign').count()).toBe(0);

    expect(errors).toEqual([]);
    await context.close();
  });
});
