import type { IncomingMessage, ServerResponse } from 'node:http';
import { drained } from '../http/drained.js';
import { hasBody } from '../http/server.js';
import type { ApiDeps } from './deps.js';
import { ApiProblem, sendProblem } from './problem.js';
import { readJsonBody, validate } from './request.js';
import type { Route, RouteAnswer } from './route.js';

// The API's dispatcher: finds the route, checks the key, validates path, query and body
// against the route's schemas, runs it and writes its answer. Routes only ever see valid
// input and only ever answer data or throw ApiProblem; everything else (a bug, a database
// that went away) becomes a 500 problem and a log line, never a crash of the daemon.

export const API_PREFIX = '/api/v1';

export interface Api {
  /** Whether a request path belongs to the API (mounted by the daemon's HTTP server). */
  owns(pathname: string): boolean;
  handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void>;
}

interface CompiledRoute {
  route: Route;
  pattern: RegExp;
  names: string[];
}

export function createApi(deps: ApiDeps, routes: readonly Route[]): Api {
  const logger = deps.logger.child({ component: 'api' });
  const compiled = routes.map(compile);
  return {
    owns: (pathname) => pathname === API_PREFIX || pathname.startsWith(`${API_PREFIX}/`),
    async handle(req, res, url) {
      let bodyRead = false;
      try {
        const path = url.pathname.slice(API_PREFIX.length) || '/';
        const method = req.method === 'HEAD' ? 'GET' : (req.method ?? 'GET');
        const matches = compiled.map((c) => ({ c, m: c.pattern.exec(path) })).filter((x) => x.m !== null);
        if (matches.length === 0) throw new ApiProblem(404, 'Not found', `no API route ${path}; the routes are listed in ${API_PREFIX}/openapi.json`);
        const hit = matches.find((x) => x.c.route.method === method);
        if (!hit) {
          const allow = [...new Set(matches.map((x) => x.c.route.method))].join(', ');
          throw new ApiProblem(405, 'Method not allowed', `${req.method} is not allowed on ${path} (allowed: ${allow})`, undefined, { Allow: allow });
        }
        const { route, names } = hit.c;
        let keyName: string | null = null;
        if (route.scope !== 'public') {
          const auth = await deps.authorize(req.headers.authorization, route.scope);
          if (!auth.ok) throw new ApiProblem(auth.status, auth.status === 401 ? 'Unauthorized' : 'Forbidden', auth.detail, undefined, auth.status === 401 ? { 'WWW-Authenticate': 'Bearer' } : undefined);
          keyName = auth.keyName;
        }
        const rawParams: Record<string, string> = {};
        names.forEach((name, i) => {
          rawParams[name] = decodeSegment(hit.m![i + 1]!);
        });
        const params = route.params ? validate(route.params, rawParams, 400, 'Invalid path', '/path') : undefined;
        const query = route.query ? validate(route.query, Object.fromEntries(url.searchParams), 400, 'Invalid query', '/query') : undefined;
        let body: unknown;
        if (route.body) {
          bodyRead = true;
          body = await readJsonBody(req, route.body, route.bodyPrecheck ? { precheck: route.bodyPrecheck } : {});
        }
        const answer = await route.handle({ params, query, body, headers: req.headers, keyName, deps });
        await send(res, answer, req.method === 'HEAD');
      } catch (err) {
        if (res.headersSent) {
          logger.error({ err, path: url.pathname }, 'API answer failed while streaming');
          res.destroy();
          return;
        }
        // A body left unread (refused before reading, or too large) must not be taken for the next request.
        const close = hasBody(req) && (!bodyRead || !req.complete);
        if (err instanceof ApiProblem) {
          sendProblem(res, err, close);
          return;
        }
        logger.error({ err, path: url.pathname, method: req.method }, 'API request failed');
        sendProblem(res, new ApiProblem(500, 'Internal error', 'the request failed inside campaignd; the daemon log has the details'), close);
      }
    },
  };
}

function compile(route: Route): CompiledRoute {
  const names: string[] = [];
  const source = route.path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{(\w+)\}/g, (_m, name: string) => {
    names.push(name);
    return '([^/]+)';
  });
  return { route, pattern: new RegExp(`^${source}$`), names };
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new ApiProblem(400, 'Invalid path', `"${segment}" is not a valid URL path segment`);
  }
}

async function send(res: ServerResponse, answer: RouteAnswer, headOnly: boolean): Promise<void> {
  if ('body' in answer) {
    const text = `${JSON.stringify(answer.body)}\n`;
    res.writeHead(answer.status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(text), 'Cache-Control': 'no-store', ...answer.headers });
    res.end(headOnly ? undefined : text);
    return;
  }
  res.writeHead(answer.status, { 'Content-Type': 'application/jsonl; charset=utf-8', 'Cache-Control': 'no-store', ...answer.headers });
  if (headOnly) {
    res.end();
    return;
  }
  // Written as produced, waiting for the client to drain.
  if ('text' in answer) {
    await answer.text(async (chunk) => {
      if (res.destroyed) throw new Error('the client went away');
      if (!res.write(chunk)) await drained(res);
    });
    res.end();
    return;
  }
  for await (const line of answer.lines) {
    if (res.destroyed) break;
    if (!res.write(`${JSON.stringify(line)}\n`)) await drained(res);
  }
  res.end();
}
