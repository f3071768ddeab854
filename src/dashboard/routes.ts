import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Kysely } from 'kysely';
import { explainNumber } from '../explain/explain.js';
import { readBody } from '../http/body.js';
import { sendJson } from '../http/respond.js';
import { hasBody } from '../http/server.js';
import { normalisePhone } from '../leads/phone.js';
import type { Logger } from '../log/logger.js';
import { exportResults } from '../results/export.js';
import { exportCampaigns } from '../store/results-export.js';
import type { Database } from '../store/types.js';
import type { Clock } from '../time/clock.js';
import { changeCampaignState } from '../lifecycle/campaign-state.js';
import { CLIENT_SCRIPT } from './asset-script.js';
import { STYLESHEET } from './asset-style.js';
import { collectDashboard, type DataDeps } from './data.js';
import { createHourlyCounter } from './hourly.js';
import { originProblem, type Guard } from './guard.js';
import type { Html } from './html.js';
import { ASSET_SCRIPT, ASSET_STYLE, renderCampaigns, renderDaemon, renderLogin, renderPage, STATUS_JSON } from './render.js';
import { renderExplanation, renderSearchProblem } from './render-explain.js';
import { FILE_NAME_HEADER, importUpload, TOO_LARGE, UPLOAD_LIMIT_BYTES, UPLOAD_PATH } from './upload.js';
import { parseView, viewQuery } from './view.js';

// The dashboard's HTTP endpoints. The daemon's server routes `/` and `/dashboard/*`
// here; everything about the dashboard (who may see it, what it shows) is decided here.

export interface DashboardDeps extends Omit<DataDeps, 'hourly'> {
  db: Kysely<Database>;
  clock: Clock;
  guard: Guard;
  logger: Logger;
  /** Called after a campaign's state changed or leads were uploaded (wakes the engine). */
  onStateChanged?: () => void;
  /** Where an uploaded lead file is staged while it is imported (a directory of its own per upload, removed after). */
  stagingDir: string;
}

export interface Dashboard {
  /** Whether `pathname` is one of the dashboard's. */
  owns(pathname: string): boolean;
  handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void>;
}

const FORM_LIMIT = 8 * 1024;

// No script or style from anywhere but the daemon, no framing, no referrer (which may hold a
// searched number) sent to other sites; same-origin keeps the Origin header of form posts
// (no-referrer makes Chromium send "Origin: null").
const PAGE_HEADERS = {
  'Content-Security-Policy': "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'same-origin',
  'Cache-Control': 'no-store',
};

export function createDashboard(deps: DashboardDeps): Dashboard {
  const logger = deps.logger.child({ component: 'dashboard' });
  const { guard } = deps;
  const sources: DataDeps = { ...deps, hourly: createHourlyCounter() };

  type Handler = (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<void> | void;
  const routes: Record<string, { method: string; auth: boolean; run: Handler }> = {
    '/': { method: 'GET', auth: true, run: page },
    [ASSET_SCRIPT]: { method: 'GET', auth: false, run: (_q, res) => asset(res, CLIENT_SCRIPT, 'text/javascript; charset=utf-8') },
    [ASSET_STYLE]: { method: 'GET', auth: false, run: (_q, res) => asset(res, STYLESHEET, 'text/css; charset=utf-8') },
    '/dashboard/login': { method: 'POST', auth: false, run: login },
    // No session needed: signing out of one that already ran out still clears the cookie.
    '/dashboard/logout': { method: 'POST', auth: false, run: logout },
    [STATUS_JSON]: { method: 'GET', auth: true, run: statusJson },
    '/dashboard/results.csv': { method: 'GET', auth: true, run: resultsCsv },
    '/dashboard/campaigns/pause': { method: 'POST', auth: true, run: (req, res) => action(req, res, 'pause') },
    '/dashboard/campaigns/resume': { method: 'POST', auth: true, run: (req, res) => action(req, res, 'resume') },
    [UPLOAD_PATH]: { method: 'POST', auth: true, run: upload },
  };

  async function page(_req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const now = deps.clock.now();
    const data = await collectDashboard(sources, now);
    const query = url.searchParams.get('phone');
    const zones = new Map(data.status.campaigns.map((c) => [c.name, c.window.timezone]));
    let search: { query: string; result: Html } | undefined;
    if (query !== null && query.trim() !== '') {
      const parsed = normalisePhone(query);
      search = parsed.ok
        ? { query, result: renderExplanation(await explainNumber(deps.db, parsed.e164, now, deps.isPidAlive), { zoneOf: (name) => zones.get(name) ?? null, now }) }
        : { query, result: renderSearchProblem(query, parsed.reason) };
    }
    sendHtml(res, 200, renderPage(data, { csrf: guard.csrfToken, tokenRequired: guard.tokenRequired, view: parseView(url.searchParams), ...(search ? { search } : {}) }));
  }

  async function statusJson(_req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const data = await collectDashboard(sources, deps.clock.now());
    // The same view as the page that asks (its query string): the rows it shows, in its order.
    sendJson(res, 200, { data, html: { daemon: renderDaemon(data).text, campaigns: renderCampaigns(data, guard.csrfToken, parseView(url.searchParams)).text } });
  }

  async function login(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const form = await readForm(req);
    if (!form) return void sendJson(res, 413, { error: 'form too large or not received' }, { close: true });
    const refused = originProblem(req);
    if (refused) {
      logger.warn({ problem: refused }, 'dashboard sign-in refused');
      return void sendHtml(res, 403, renderLogin(`This sign-in was refused (${refused}): sign in from the dashboard page.`));
    }
    if (!guard.tokenRequired) return redirect(res, '/');
    if (!guard.tokenMatches(form.get('token') ?? '')) {
      logger.warn('dashboard sign-in with a wrong token');
      return void sendHtml(res, 401, renderLogin('That is not the dashboard token.'));
    }
    redirect(res, '/', await guard.startSession());
  }

  async function logout(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const form = await readForm(req);
    const problem = form ? guard.csrfProblem(req, form.get('csrf') ?? undefined) : 'form not received';
    if (problem) return void sendJson(res, 403, { error: problem });
    redirect(res, '/', await guard.endSession(req));
  }

  async function action(req: IncomingMessage, res: ServerResponse, what: 'pause' | 'resume'): Promise<void> {
    const form = await readForm(req);
    if (!form) return void sendJson(res, 413, { error: 'form too large or not received' }, { close: true });
    const problem = guard.csrfProblem(req, (req.headers['x-csrf-token'] as string | undefined) ?? form.get('csrf') ?? undefined);
    if (problem) {
      logger.warn({ problem }, 'dashboard action refused');
      return void sendJson(res, 403, { error: `refused: ${problem}` });
    }
    const name = form.get('campaign') ?? '';
    const result = await changeCampaignState(deps.db, name, what, deps.clock.now(), 'dashboard');
    if (!result.ok) return void sendJson(res, result.status, { error: result.message });
    logger.info({ campaign: name, from: result.from, to: result.to }, `campaign ${what}d from the dashboard`);
    deps.onStateChanged?.();
    // A plain form post goes back to the page; a script gets JSON.
    // The page goes back to the view it was posted from (re-read: never a path of the form's
    // choosing), scrolled to the opened card.
    const back = parseView(new URLSearchParams(form.get('back') ?? ''));
    if ((req.headers.accept ?? '').includes('text/html')) redirect(res, `/${viewQuery(back)}${back.open !== null ? '#open' : ''}`);
    else sendJson(res, 200, { campaign: name, from: result.from, to: result.to });
  }

  async function upload(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    // Checked before a byte of the file is read: the token and origin travel in headers.
    const problem = guard.csrfProblem(req, req.headers['x-csrf-token'] as string | undefined);
    if (problem) {
      logger.warn({ problem }, 'dashboard upload refused');
      return void sendJson(res, 403, { error: `refused: ${problem}` }, { close: hasBody(req) });
    }
    if ((req.headers['content-type'] ?? '').toLowerCase().startsWith('multipart/form-data')) {
      return void sendJson(res, 415, { error: 'the lead file is sent by the dashboard page\'s script (as the request body): upload it from the page with JavaScript on, or use "campaignd leads import"' }, { close: true });
    }
    const body = await readBody(req, UPLOAD_LIMIT_BYTES);
    if (body.kind === 'too-large') return void sendJson(res, 413, { error: TOO_LARGE }, { close: true });
    if (body.kind === 'aborted') return void res.destroy();
    const campaign = url.searchParams.get('campaign') ?? '';
    const answer = await importUpload(deps.db, { campaign, fileName: decodedHeader(req.headers[FILE_NAME_HEADER]), bytes: body.body, stagingDir: deps.stagingDir, clock: deps.clock });
    if (answer.status === 200) {
      const { file, read, accepted, updated, invalid } = answer.body;
      logger.info({ campaign, file, read, accepted, updated, invalid }, 'leads uploaded from the dashboard');
      deps.onStateChanged?.();
    } else {
      logger.warn({ campaign, problem: answer.body.error }, 'dashboard upload not imported');
    }
    sendJson(res, answer.status, answer.body);
  }

  async function resultsCsv(_req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const name = url.searchParams.get('campaign') ?? '';
    const campaigns = await exportCampaigns(deps.db, name);
    if (campaigns.length === 0) return void sendJson(res, 404, { error: `no campaign named "${name}"` });
    const ascii = name.replace(/[^A-Za-z0-9._-]+/g, '_');
    res.writeHead(200, {
      'Content-Type': 'text/csv; charset=utf-8',
      'Content-Disposition': `attachment; filename="results-${ascii}.csv"; filename*=UTF-8''results-${encodeURIComponent(name)}.csv`,
      'Cache-Control': 'no-store',
      'X-Content-Type-Options': 'nosniff',
    });
    let gone = false;
    res.on('close', () => (gone = true));
    // The export waits for the socket to drain, so a slow reader never makes us buffer the file.
    const sink = async (text: string): Promise<void> => {
      if (gone) throw new Error('client went away');
      if (!res.write(text)) await new Promise<void>((resolve) => {
        const done = (): void => { res.off('drain', done); res.off('close', done); resolve(); };
        res.on('drain', done);
        res.on('close', done);
      });
    };
    try {
      const { leads } = await exportResults(deps.db, { format: 'csv', scope: { campaignIds: campaigns.map((c) => c.id) }, campaignNames: new Map(campaigns.map((c) => [c.id, c.name])) }, sink);
      res.end();
      logger.info({ campaign: name, leads }, 'results exported from the dashboard');
    } catch (err) {
      if (!gone) logger.error({ err: String(err), campaign: name }, 'results export failed');
      res.destroy();
    }
  }

  return {
    owns: (pathname) => pathname === '/' || pathname.startsWith('/dashboard/'),
    async handle(req, res, url) {
      const route = routes[url.pathname];
      if (!route) return void sendJson(res, 404, { error: `no such path: ${url.pathname}` }, { close: hasBody(req) });
      const method = req.method ?? 'GET';
      const allowed = route.method === 'GET' ? ['GET', 'HEAD'] : [route.method];
      if (!allowed.includes(method)) {
        return void sendJson(res, 405, { error: `method ${method} not allowed on ${url.pathname}` }, { close: hasBody(req), headers: { Allow: allowed.join(', ') } });
      }
      if (route.auth && !(await guard.authorised(req))) {
        // 401 before the body is read: nothing of an unauthorised request is acted on.
        if (method === 'GET' && url.pathname === '/') return void sendHtml(res, 401, renderLogin());
        return void sendJson(res, 401, { error: 'the dashboard token is required: sign in at /' }, { close: hasBody(req) });
      }
      await route.run(req, res, url);
    },
  };
}

async function readForm(req: IncomingMessage): Promise<URLSearchParams | null> {
  const body = await readBody(req, FORM_LIMIT);
  if (body.kind !== 'ok') return null;
  const text = body.body.toString('utf8');
  if ((req.headers['content-type'] ?? '').includes('application/json')) {
    try {
      const value = JSON.parse(text) as Record<string, unknown>;
      return new URLSearchParams(Object.entries(value ?? {}).filter((e): e is [string, string] => typeof e[1] === 'string'));
    } catch {
      return new URLSearchParams();
    }
  }
  return new URLSearchParams(text);
}

/** A percent-encoded header value (headers carry ASCII only); '' when absent or malformed. */
function decodedHeader(value: string | string[] | undefined): string {
  if (typeof value !== 'string') return '';
  try {
    return decodeURIComponent(value);
  } catch {
    return '';
  }
}

function sendHtml(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { 'Content-Type': 'text/html; charset=utf-8', 'Content-Length': Buffer.byteLength(text), ...PAGE_HEADERS });
  res.end(text);
}

function asset(res: ServerResponse, text: string, type: string): void {
  res.writeHead(200, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(text), 'Cache-Control': 'no-cache', 'X-Content-Type-Options': 'nosniff' });
  res.end(text);
}

function redirect(res: ServerResponse, location: string, cookie?: string): void {
  res.writeHead(303, { Location: location, 'Cache-Control': 'no-store', 'Content-Length': 0, ...(cookie ? { 'Set-Cookie': cookie } : {}) });
  res.end();
}
