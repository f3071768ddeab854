// A load balancer for the post-call webhooks of several campaignd instances (docs/design.md §10:
// "webhooks may reach any instance"), as the failover tests need one: round-robin over the
// upstreams, and an upstream that refuses the connection (killed) or does not answer
// (stopped) is skipped for the next one, as nginx's passive checks do. Plain node:http, so
// what reaches a daemon is exactly what the service sent.
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import type { AddressInfo } from 'node:net';

export interface WebhookProxy {
  /** The proxy's base URL (http://127.0.0.1:PORT). */
  url: string;
  /** Requests forwarded per upstream port, those no upstream took, those sent on to another upstream after one failed or timed out, and each answered request's time in ms. */
  stats(): { forwarded: Record<number, number>; failed: number; retried: number; latenciesMs: number[] };
  close(): Promise<void>;
}

/** How long an upstream may take before the next one is tried (a SIGSTOPped daemon never answers). */
const UPSTREAM_TIMEOUT_MS = 2_000;

export interface WebhookProxyOptions {
  /** Default 2 s, for tests that freeze an instance; nginx's default is 60 s. */
  upstreamTimeoutMs?: number;
}

export async function startWebhookProxy(upstreamPorts: readonly number[], opts: WebhookProxyOptions = {}): Promise<WebhookProxy> {
  const timeoutMs = opts.upstreamTimeoutMs ?? UPSTREAM_TIMEOUT_MS;
  const latencies: number[] = [];
  let next = 0;
  const forwarded: Record<number, number> = Object.fromEntries(upstreamPorts.map((p) => [p, 0]));
  let failed = 0;
  let retried = 0;

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const start = next++ % upstreamPorts.length;
      const began = performance.now();
      const order = upstreamPorts.map((_, i) => upstreamPorts[(start + i) % upstreamPorts.length]!);
      void tryUpstreams(order, req, body, timeoutMs, () => retried++).then((answer) => {
        if (!answer) {
          failed++;
          res.writeHead(502).end();
          return;
        }
        forwarded[answer.port] = (forwarded[answer.port] ?? 0) + 1;
        latencies.push(performance.now() - began);
        res.writeHead(answer.status, { 'content-type': answer.contentType }).end(answer.body);
      });
    });
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    stats: () => ({ forwarded: { ...forwarded }, failed, retried, latenciesMs: [...latencies] }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

interface Answer {
  port: number;
  status: number;
  contentType: string;
  body: Buffer;
}

async function tryUpstreams(ports: readonly number[], req: http.IncomingMessage, body: Buffer, timeoutMs: number, onRetry: () => void): Promise<Answer | null> {
  for (const [i, port] of ports.entries()) {
    if (i > 0) onRetry();
    const answer = await forward(port, req, body, timeoutMs);
    // A 5xx from one instance (its store busy, shutting down) is retried on the next, as a balancer would.
    if (answer && answer.status < 500) return answer;
  }
  return null;
}

function forward(port: number, req: http.IncomingMessage, body: Buffer, timeoutMs: number): Promise<Answer | null> {
  return new Promise((resolve) => {
    const headers = { ...req.headers, host: `127.0.0.1:${port}`, 'content-length': String(body.length) };
    const out = http.request({ host: '127.0.0.1', port, method: req.method, path: req.url, headers, timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ port, status: res.statusCode ?? 502, contentType: String(res.headers['content-type'] ?? 'text/plain'), body: Buffer.concat(chunks) }));
      res.on('error', () => resolve(null));
    });
    out.on('timeout', () => out.destroy());
    out.on('error', () => resolve(null));
    out.end(body);
  });
}
