// The dashboard in a real browser (Chromium from @sparticuz/chromium, driven by
// playwright-core) against a real daemon process and the simulator: sign-in with the
// token, the campaigns shown, a live update when a call ends, actions refused without the
// token, the CSRF token or an Origin (the store unchanged), pause and resume from the page
// (the store says so), explain by phone number, the results CSV downloaded and parsed, and
// sign-out ending the session (the old cookie refused).
import fs from 'node:fs';
import { parse } from 'csv-parse/sync';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/store/database.js';
import { stopAllProcesses } from '../helpers/processes.js';
import { waitUntil } from '../helpers/wait.js';
import { assertNoSecrets, campaignState, numbers, type CampaignSpec } from './daemon-fixture.js';
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

/** Finished leads (every final state) of a campaign, from the store. */
async function finishedInStore(dbPath: string, campaign: string): Promise<number> {
  const store = openDatabase(dbPath, { readonly: true });
  try {
    const rows = await store.db
      .selectFrom('leads')
      .innerJoin('campaigns', 'campaigns.id', 'leads.campaign_id')
      .where('campaigns.name', '=', campaign)
      .where('leads.state', 'in', ['completed', 'reached-max-retries', 'invalid', 'suppressed'])
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirst();
    return Number(rows?.n ?? 0);
  } finally {
    await store.close();
  }
}

const finishedOnPage = async (page: Page, campaign: string): Promise<number> =>
  Number((await page.locator(`.campaign[data-campaign="${campaign}"] .finished`).textContent())?.replace(/,/g, ''));

describe('the dashboard in Chromium', () => {
  it('signs in, shows and updates campaigns, refuses unguarded actions, pauses, explains, downloads results', { timeout: 150_000 }, async () => {
    const alphaNums = numbers(4);
    const betaNums = numbers(30, 100);
    const alpha: CampaignSpec = { name: 'alpha', leads: alphaNums.map((n) => [n]), maxParallel: 1, maxRetries: 0, retryInterval: 1 };
    const beta: CampaignSpec = { name: 'beta', leads: betaNums.map((n) => [n]), maxParallel: 1, maxRetries: 0, retryInterval: 1 };
    scenario = await startDashboardScenario({
      campaigns: [alpha, beta],
      // alpha's calls talk for 12 s: the page is loaded while the first is live.
      before: async (sim) => {
        for (const n of alphaNums) await sim.control('outcomes', { phone_number: n, status: 'completed', answered_by: 'human', duration: 12, count: 1 });
      },
    });
    const { sim, ws, url } = scenario;
    await waitUntil(async () => (await sim.calls()).some((c) => alphaNums.includes(c.client_phone_number)), { message: "alpha's first call" });

    const context = await browser.newContext({ acceptDownloads: true });
    const page = await context.newPage();
    const foreign: string[] = [];
    page.on('request', (r) => {
      if (!r.url().startsWith(url)) foreign.push(r.url());
    });

    // Without the token: the sign-in page, with status 401.
    const first = await page.goto(url);
    expect(first?.status()).toBe(401);
    await expect(page.locator('input[name="token"]').count()).resolves.toBe(1);
    expect(await page.locator('.campaign').count()).toBe(0);

    // A wrong token is refused; the right one opens the dashboard and sets an HttpOnly, SameSite=Strict cookie.
    await page.fill('input[name="token"]', 'not-the-token');
    await page.click('button[type="submit"]');
    await expect(page.locator('.problem').textContent()).resolves.toContain('not the dashboard token');
    await page.fill('input[name="token"]', DASHBOARD_TOKEN);
    await Promise.all([page.waitForURL(`${url}/`), page.click('button[type="submit"]')]);
    await page.waitForSelector('.campaign[data-campaign="alpha"]');
    expect(await page.locator('.campaign').evaluateAll((els) => els.map((e) => e.getAttribute('data-campaign')))).toEqual(['alpha', 'beta']);
    const [cookie] = await context.cookies();
    expect(cookie).toMatchObject({ name: 'campaignd_dashboard', httpOnly: true, sameSite: 'Strict' });
    expect(cookie!.value).not.toContain(DASHBOARD_TOKEN);
    expect(await page.evaluate('document.cookie')).toBe('');

    // The facts of the page: state, window, live calls against the limit, the active instance.
    const alphaCard = page.locator('.campaign[data-campaign="alpha"]');
    await expect(alphaCard.locator('.state').first().textContent()).resolves.toBe('running');
    // The test campaigns call around the clock (00:00–00:00 every day).
    await expect(alphaCard.locator('.window').textContent()).resolves.toMatch(/open around the clock/);
    await expect(page.locator('#daemon').textContent()).resolves.toContain(`pid ${scenario.daemon.pid}`);
    expect(await alphaCard.locator('svg.hours rect.col').count()).toBe(24);

    // Updates when a call ends: no reload (the marker survives), the count follows the store.
    const before = await finishedOnPage(page, 'alpha');
    expect(before).toBe(0);
    await page.evaluate('window.marker = 42');
    await waitUntil(async () => (await finishedOnPage(page, 'alpha')) >= 1, { timeoutMs: 30_000, intervalMs: 100, message: 'the page to show the end of the first call' });
    expect(await page.evaluate('window.marker')).toBe(42);
    expect(await finishedInStore(ws.dbPath, 'alpha')).toBeGreaterThanOrEqual(await finishedOnPage(page, 'alpha'));
    // Once a lead is finished the pace gives an estimate, shown in the campaign's zone and the viewer's.
    await expect(alphaCard.locator('time[data-local]').first().textContent()).resolves.toMatch(/^(Mon|Tue|Wed|Thu|Fri|Sat|Sun) \d\d:\d\d UTC$/);

    // Refused without the token: 401 and nothing changes; with the cookie but without the CSRF token: 403.
    const noToken = await fetch(`${url}/dashboard/campaigns/pause`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'campaign=beta' });
    expect(noToken.status).toBe(401);
    expect((await fetch(`${url}/dashboard/status.json`)).status).toBe(401);
    expect((await fetch(`${url}/dashboard/results.csv?campaign=alpha`)).status).toBe(401);
    const session = `${cookie!.name}=${cookie!.value}`;
    const noCsrf = await fetch(`${url}/dashboard/campaigns/pause`, { method: 'POST', headers: { cookie: session, 'content-type': 'application/x-www-form-urlencoded' }, body: 'campaign=beta' });
    expect(noCsrf.status).toBe(403);
    const csrf = await page.locator('meta[name="csrf-token"]').getAttribute('content');
    const crossSite = await fetch(`${url}/dashboard/campaigns/pause`, {
      method: 'POST',
      headers: { cookie: session, origin: 'http://evil.example', 'content-type': 'application/x-www-form-urlencoded' },
      body: `campaign=beta&csrf=${encodeURIComponent(csrf!)}`,
    });
    expect(crossSite.status).toBe(403);
    // Neither Origin nor Referer (a script, not the page): refused although the CSRF token is right.
    const noOrigin = await fetch(`${url}/dashboard/campaigns/pause`, {
      method: 'POST',
      headers: { cookie: session, 'content-type': 'application/x-www-form-urlencoded' },
      body: `campaign=beta&csrf=${encodeURIComponent(csrf!)}`,
    });
    expect(noOrigin.status).toBe(403);
    expect(await campaignState(ws, 'beta')).toBe('running');

    // Pause from the page: the store says paused, and so does the page.
    const betaCard = page.locator('.campaign[data-campaign="beta"]');
    await Promise.all([page.waitForURL(`${url}/`), betaCard.locator('button.pause').click()]);
    expect(await campaignState(ws, 'beta')).toBe('paused');
    await expect(page.locator('.campaign[data-campaign="beta"] .state').first().textContent()).resolves.toBe('paused');
    await expect(page.locator('.campaign[data-campaign="beta"] button.resume').count()).resolves.toBe(1);
    // Resume, and pause again, so that the rest of the test runs with beta paused.
    await Promise.all([page.waitForURL(`${url}/`), page.locator('.campaign[data-campaign="beta"] button.resume').click()]);
    expect(await campaignState(ws, 'beta')).toBe('running');
    await Promise.all([page.waitForURL(`${url}/`), page.locator('.campaign[data-campaign="beta"] button.pause').click()]);
    expect(await campaignState(ws, 'beta')).toBe('paused');

    // Find a lead by its number: explain for the campaign holding it.
    await page.fill('#phone', alphaNums[3]!);
    await Promise.all([page.waitForURL(/\?phone=/), page.click('.search button[type="submit"]')]);
    const found = page.locator('#search-result .explain[data-campaign="alpha"]');
    await expect(found.count()).resolves.toBe(1);
    await expect(found.textContent()).resolves.toContain('Why:');

    // A search holding markup is shown as text, never run.
    await page.goto(`${url}/?phone=${encodeURIComponent('<img src=x onerror="document.title=\'pwned\'">')}`);
    await expect(page.locator('#search-result .problem').textContent()).resolves.toContain('<img src=x');
    expect(await page.locator('#search-result img').count()).toBe(0);
    expect(await page.title()).not.toBe('pwned');

    // The results CSV of alpha: downloaded by the browser, parsed, one record per lead.
    await page.goto(url);
    const [download] = await Promise.all([page.waitForEvent('download'), page.locator('.campaign[data-campaign="alpha"] a.download').click()]);
    expect(download.suggestedFilename()).toBe('results-alpha.csv');
    const text = fs.readFileSync((await download.path())!, 'utf8');
    const records = parse(text, { bom: true, columns: true }) as Record<string, string>[];
    expect(records).toHaveLength(alphaNums.length);
    expect(records.map((r) => r.campaign)).toEqual(alphaNums.map(() => 'alpha'));
    expect(new Set(records.map((r) => r.phone_number))).toEqual(new Set(alphaNums));

    // Sign out: the session ends in the store, so the old cookie, replayed, gets 401.
    expect((await fetch(`${url}/dashboard/status.json`, { headers: { cookie: session } })).status).toBe(200);
    await page.click('form.logout button');
    await page.waitForSelector('input[name="token"]');
    expect((await fetch(`${url}/dashboard/status.json`, { headers: { cookie: session } })).status).toBe(401);
    expect((await fetch(url, { headers: { cookie: session } })).status).toBe(401);

    // Everything came from the daemon; no secret in the daemon's output.
    expect(foreign).toEqual([]);
    await context.close();
    const out = [scenario.daemon.stdout(), scenario.daemon.stderr()];
    assertNoSecrets(out, 'the daemon output');
    for (const t of out) expect(t).not.toContain(DASHBOARD_TOKEN);
  });
});
