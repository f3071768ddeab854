// `npx tsx scripts/dashboard-screenshot.ts [OUT.png]`: docs/dashboard.png, the dashboard of a
// running daemon, made with the browser test's own setup (test/e2e/dashboard-setup.ts): the
// simulator, `campaignd run` (the compiled bin) with three campaigns and a dashboard token,
// Chromium from @sparticuz/chromium signing in like a person. Taken once a few dozen calls
// have ended, with one campaign paused from the page and one number explained.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildIfStale } from '../test/helpers/build.js';
import { stopAllProcesses } from '../test/helpers/processes.js';
import { waitUntil } from '../test/helpers/wait.js';
import { numbers, type CampaignSpec } from '../test/e2e/daemon-fixture.js';
import { DASHBOARD_TOKEN, launchBrowser, startDashboardScenario } from '../test/e2e/dashboard-setup.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const out = path.resolve(process.argv[2] ?? path.join(root, 'docs/dashboard.png'));

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
} finally {
  await browser.close();
  await stopAllProcesses();
  scenario.ws.cleanup();
}
