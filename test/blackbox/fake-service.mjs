#!/usr/bin/env node
// An independent fake of the Voice Assistant Calling Service for black-box tests of
// campaignd. Written from the service's interface specification and the reports
// of the live service (docs/simulator.md, first section) ONLY (never from src/simulator or src/service), and
// choosing differently from campaignd's simulator wherever those allow it: see
// test/blackbox/README.md. Plain JavaScript on node:http, no dependencies.
//
//   node test/blackbox/fake-service.mjs --token T [--seed N] [--server-timezone Z] ...
//
// Prints one line when both servers listen:
//   fake-service listening on http://127.0.0.1:PORT control http://127.0.0.1:CPORT
import http from 'node:http';
import { createAssistants } from './fake/assistants.mjs';
import { routeApi } from './fake/api-routes.mjs';
import { createCalls } from './fake/calls.mjs';
import { routeControl } from './fake/control-routes.mjs';
import { createFaults } from './fake/faults.mjs';
import { delay, resetConnection, sendHtml, sendJson } from './fake/http-io.mjs';
import { readOptions } from './fake/options.mjs';
import { createRateLimiter } from './fake/rate-limiter.mjs';
import { createWebhookSender } from './fake/webhooks.mjs';

const LOGIN_PAGE = '<!DOCTYPE html><html><head><title>Log in</title></head><body><form method="post" action="/login"><input name="email"><input name="password" type="password"><button>Log in</button></form></body></html>';

let opts;
try {
  opts = readOptions(process.argv.slice(2));
} catch (err) {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(2);
}
if (opts.help) {
  process.stdout.write(`${opts.help}\n`);
  process.exit(0);
}

const stats = { requests: 0, by_route: {}, rate_limited: 0, redirects: 0, login_page_views: 0, call_list_pages: {}, webhooks: { sent: 0, ok: 0, refused: 0, failed: 0 } };
const assistants = createAssistants({ outboundId: opts.assistantId, timezone: 'America/Chicago' });
const calls = createCalls(opts, (call) => deliver(call));
const deliver = createWebhookSender({ assistants, zone: opts.serverTimezone, stats });
const faults = createFaults(opts.seed);
const limiter = createRateLimiter(opts.rateLimit);
const ctx = { opts, stats, assistants, calls, faults, baseUrl: '' };

function routeKey(method, path) {
  return `${method} ${path.replace(/^\/api\/user\/(assistant|tools)\/[^/]+$/, '/api/user/$1/{id}')}`;
}

function count(method, path, outcome) {
  const key = routeKey(method, path);
  const byStatus = (stats.by_route[key] ??= {});
  byStatus[outcome] = (byStatus[outcome] ?? 0) + 1;
}

async function handleApi(req, res, url) {
  stats.requests++;
  const path = url.pathname;
  let counted = false;
  const drop = () => {
    counted = true;
    count(req.method, path, 'reset');
    resetConnection(req);
  };
  res.on('finish', () => {
    if (!counted) count(req.method, path, String(res.statusCode));
  });
  const auth = req.headers.authorization ?? '';
  const token = /^Bearer\s+(.+)$/i.exec(auth)?.[1]?.trim() ?? '';
  const now = Date.now();
  // The limit is counted per token presented, before the token is checked.
  const limit = limiter.take(token, now);
  if (token !== opts.token) {
    // As one client reports of the live service: a bad key gets a 302 to the login page, not a 401.
    stats.redirects++;
    res.writeHead(302, { location: `${ctx.baseUrl}/login`, 'content-type': 'text/html; charset=UTF-8' });
    return res.end(`<html><body>Redirecting to <a href="${ctx.baseUrl}/login">${ctx.baseUrl}/login</a>.</body></html>`);
  }
  if (!limit.ok) {
    // The limiter's own 429: the wait is in the body (and X-RateLimit-Reset), no Retry-After header.
    stats.rate_limited++;
    return sendJson(res, 429, { error: 'Rate limit exceeded', message: 'Too many requests. Please try again later.', retry_after: limit.retryAfter }, limit.headers);
  }
  const f = faults.decide(path, now);
  if (f.latencyMs > 0) await delay(f.latencyMs);
  if (f.action === 'reset') return drop();
  if (f.action === 'rate_limited_header') return sendJson(res, 429, { message: 'Too Many Attempts.' }, { ...limit.headers, 'retry-after': String(f.retryAfter) });
  if (f.action === 'rate_limited_body') return sendJson(res, 429, { error: 'Rate limit exceeded', message: 'Too many requests. Please try again later.', retry_after: f.retryAfter }, limit.headers);
  if (f.action === 'server_error') {
    if (f.html) return sendHtml(res, f.status, `<html><head><title>${f.status}</title></head><body><center><h1>${f.status}</h1></center><hr><center>nginx</center></body></html>`);
    return sendJson(res, f.status, { message: 'Server Error' }, limit.headers);
  }
  return routeApi(ctx, req, res, url, { headers: limit.headers, dropAfterCreate: f.dropAfterCreate, drop });
}

const api = http.createServer((req, res) => {
  const url = new URL(req.url ?? '/', ctx.baseUrl || 'http://localhost');
  if (url.pathname === '/login') {
    // Counted: a client that follows the 302 of a bad token ends up here.
    stats.login_page_views++;
    return sendHtml(res, 200, LOGIN_PAGE);
  }
  if (!url.pathname.startsWith('/api/user/')) return sendJson(res, 404, { message: 'Not Found' });
  handleApi(req, res, url).catch((err) => {
    process.stderr.write(`fake-service: ${err instanceof Error ? err.stack : String(err)}\n`);
    if (!res.headersSent) sendJson(res, 500, { message: 'Server Error' });
  });
});
const control = http.createServer((req, res) => {
  routeControl(ctx, req, res).catch((err) => {
    if (!res.headersSent) sendJson(res, 500, { message: err instanceof Error ? err.message : String(err) });
  });
});

function listen(server, port) {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, opts.host, () => resolve(server.address().port));
  });
}

const apiPort = await listen(api, opts.port);
const controlPort = await listen(control, opts.controlPort);
ctx.baseUrl = `http://${opts.host}:${apiPort}`;
process.stdout.write(`fake-service listening on ${ctx.baseUrl} control http://${opts.host}:${controlPort}\n`);

function shutdown() {
  calls.stop();
  api.closeAllConnections?.();
  control.closeAllConnections?.();
  api.close();
  control.close();
}
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
