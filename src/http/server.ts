import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Clock } from '../time/clock.js';
import type { Logger } from '../log/logger.js';
import type { Metrics } from './metrics.js';
import { sendJson, sendText } from './respond.js';
import { handleWebhook, type WebhookSink } from './webhook-route.js';

/** What `/readyz` reports: ok only when every check passes. */
export interface Readiness {
  ok: boolean;
  checks: Record<string, string>;
}

export interface HttpServerOptions {
  host: string;
  /** 0 picks a free port (tests). */
  port: number;
  logger: Logger;
  metrics: Metrics;
  /** Database open, token accepted… */
  ready: () => Promise<Readiness>;
  webhook: WebhookSink;
  clock: Clock;
  /** Webhook body limit in bytes; default 1 MiB. */
  bodyLimit?: number;
  /** The dashboard (src/dashboard/): `/` and `/dashboard/*` are routed to it. */
  dashboard?: MountedSurface;
  /** The API (src/api/): `/api/v1/*` is routed to it; it answers its own 404 and 405. */
  api?: MountedSurface;
}

/** A part of the HTTP surface with paths of its own (the dashboard, the API). */
export interface MountedSurface {
  owns(pathname: string): boolean;
  handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void>;
}

export interface HttpServerHandle {
  /** The port actually bound. */
  port: number;
  /** Stops listening and drops open connections; resolves when the socket is closed. */
  close(): Promise<void>;
}

export const WEBHOOK_PATH = '/webhooks/post-call';

type Route = { methods: readonly string[]; run: (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<void> | void };

/** Starts the daemon's own HTTP surface: /healthz, /readyz, /metrics, the post-call webhook, the API and the dashboard. */
export async function startHttpServer(opts: HttpServerOptions): Promise<HttpServerHandle> {
  const logger = opts.logger.child({ component: 'http' });
  const routes: Record<string, Route> = {
    '/healthz': { methods: ['GET', 'HEAD'], run: (_req, res) => sendJson(res, 200, { status: 'ok' }) },
    '/readyz': {
      methods: ['GET', 'HEAD'],
      run: async (_req, res) => {
        let readiness: Readiness;
        try {
          readiness = await opts.ready();
        } catch (err) {
          logger.error({ err }, 'readiness check failed');
          readiness = { ok: false, checks: { readiness: 'check failed' } };
        }
        sendJson(res, readiness.ok ? 200 : 503, { status: readiness.ok ? 'ready' : 'not ready', checks: readiness.checks });
      },
    },
    '/metrics': {
      methods: ['GET', 'HEAD'],
      run: async (_req, res) => {
        sendText(res, 200, await opts.metrics.registry.metrics(), opts.metrics.registry.contentType);
      },
    },
    [WEBHOOK_PATH]: {
      methods: ['POST'],
      run: (req, res, url) =>
        handleWebhook(req, res, url, { sink: opts.webhook, metrics: opts.metrics, logger, clock: opts.clock, bodyLimit: opts.bodyLimit }),
    },
  };

  const server = http.createServer((req, res) => {
    void dispatch(req, res);
  });

  async function dispatch(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://campaignd.invalid');
    } catch {
      sendJson(res, 400, { error: 'malformed request target' }, { close: true });
      return;
    }
    const { dashboard, api } = opts;
    const route: Route | undefined =
      routes[url.pathname] ??
      (api?.owns(url.pathname) ? { methods: ['GET', 'HEAD', 'POST', 'PATCH', 'DELETE'], run: (q, r, u) => api.handle(q, r, u) } : undefined) ??
      (dashboard?.owns(url.pathname) ? { methods: ['GET', 'HEAD', 'POST'], run: (q, r, u) => dashboard.handle(q, r, u) } : undefined);
    // Unread bodies of refused requests must not be parsed as the next request.
    if (!route) {
      sendJson(res, 404, { error: `no such path: ${url.pathname}` }, { close: hasBody(req) });
      return;
    }
    const method = req.method ?? 'GET';
    if (!route.methods.includes(method)) {
      sendJson(res, 405, { error: `method ${method} not allowed on ${url.pathname}` }, { close: hasBody(req), headers: { Allow: route.methods.join(', ') } });
      return;
    }
    try {
      await route.run(req, res, url);
    } catch (err) {
      // The path only: the query may carry the webhook secret.
      logger.error({ err, path: url.pathname }, 'request failed');
      if (!res.headersSent) sendJson(res, 500, { error: 'internal error' }, { close: true });
      else res.destroy();
    }
  }

  server.on('clientError', (_err, socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
    else socket.destroy();
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  logger.info({ host: opts.host, port }, 'HTTP surface listening');

  let closing: Promise<void> | undefined;
  return {
    port,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

/** Whether a request announces a body (which a refusal leaves unread). */
export function hasBody(req: IncomingMessage): boolean {
  return req.headers['content-length'] !== undefined ? req.headers['content-length'] !== '0' : req.headers['transfer-encoding'] !== undefined;
}
