// `npx tsx scripts/dashboard-screenshot.ts [OUT-DIR]`: the README's two pictures, made with
// the browser tests' own setups and Chromium from @sparticuz/chromium signing in like a person.
//  - dashboard.png: the cards of a running daemon (test/e2e/dashboard-setup.ts: the
//    simulator, `campaignd run` from the compiled bin, three campaigns, a dashboard token),
//    taken once a few dozen calls have ended, one campaign paused from the page and one
//    number explained;
//  - dashboard-overview.png: the overview of 100 campaigns (test/e2e/dashboard-many.ts),
//    sorted by finish estimate with one row opened, seen from Paris.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildIfStale } from '../test/helpers/build.js';
import { stopAllProcesses } from '../test/helpers/processes.js';
import { waitUntil } from '../test/helpers/wait.js';
import { numbers, type CampaignSpec } from '../test/e2e/daemon-fixture.js';
import { DASHBOARD_TOKEN, launchBrowser, startDashboardScenario } from '../test/e2e/dashboard-setup.js';
import { MANY_TOKEN, startManyDashboard } from '../test/e2e/dashboard-many.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const outDir = path.resolve(process.argv[2] ?? path.join(root, 'docs'));
const out = path.join(outDir, 'dashboard.png');
const overviewOut = path.join(outDir, 'dashboard-overview.png');

const campaigns: CampaignSpec[] = [
  { name: 'spring-renewals', leads: numbers(60).map((n) => [n]), maxParallel: 4, maxRetries: 2, retryInterval: 2 },
  { name: 'winback-q4', leads: numbers(40, 1000).map((n) => [n]), maxParallel: 3, maxRetries: 1, retryInterval: 2 },
  { name: 'nps-survey', leads: numbers(30, 2000).map((n) => [n]), maxParallel: 2, maxRetries: 0, retryInterval: 2 },
];

await buildIfStale();
const scenario = await startDashboardScenario({ campaigns, seed: 11, callDuration: '2-6' });
const browser = await launchBrowser();
try {
  // Enough ended calls that the charts have something to show, while calls are still live.
  await waitUntil(async () => (await scenario.sim.calls()).filter((c) => c.finished_at_ms !== null).length >= 40, { timeoutMs: 120_000, message: '40 ended calls' });
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 }, deviceScaleFactor: 1 });
  await page.goto(scenario.url);
  await page.fill('input[name="token"]', DASHBOARD_TOKEN);
  await Promise.all([page.waitForURL(`${scenario.url}/`), page.click('button[type="submit"]')]);
  await Promise.all([page.waitForURL(`${scenario.url}/`), page.locator('.campaign[data-campaign="nps-survey"] button.pause').click()]);
  await page.fill('#phone', campaigns[0]!.leads[0]![0]!);
  await Promise.all([page.waitForURL(/\?phone=/), page.click('.search button[type="submit"]')]);
  await page.waitForSelector('#search-result .explain');
  await page.screenshot({ path: out, fullPage: true });
  console.log(`wrote ${path.relative(process.cwd(), out)}`);
  await overview();
} finally {
  await browser.close();
  await stopAllProcesses();
  scenario.ws.cleanup();
}

async function overview(): Promise<void> {
  const many = await startManyDashboard();
  try {
    const context = await browser.newContext({ viewport: { width: 1440, height: 1000 }, deviceScaleFactor: 1, timezoneId: 'Europe/Paris' });
    const page = await context.newPage();
    await page.goto(many.url);
    await page.fill('input[name="token"]', MANY_TOKEN);
    await page.click('button[type="submit"]');
    await page.waitForSelector('tr.c-row');
    await page.goto(`${many.url}/?sort=finish`);
    const third = await page.locator('tr.c-row').nth(2).getAttribute('data-campaign');
    await page.goto(`${many.url}/?sort=finish&open=${encodeURIComponent(third!)}`);
    await page.waitForSelector('tr.card-row article.campaign');
    const height = await page.evaluate('document.documentElement.scrollHeight');
    await page.screenshot({ path: overviewOut });
    console.log(`wrote ${path.relative(process.cwd(), overviewOut)} (the whole page of 100 campaigns, one opened: ${height} px)`);
    // The context goes with the browser: closing it alone stops this single-process Chromium.
  } finally {
    await many.close();
  }
}
