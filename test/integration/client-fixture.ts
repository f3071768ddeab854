import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { createLogger, type Logger } from '../../src/log/logger.js';

/** One request as the fake service saw it. */
export interface Hit {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

export type Handler = (req: IncomingMessage, res: ServerResponse, hit: Hit, index: number) => void | Promise<void>;

export interface FakeService {
  url: string;
  hits: Hit[];
  /** Resolves once at least `n` requests have arrived. */
  waitForHits(n: number): Promise<void>;
  close(): Promise<void>;
}

/** A real HTTP server on 127.0.0.1, port 0, answering with `handler`. */
export async function startFakeService(handler: Handler): Promise<FakeService> {
  const hits: Hit[] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const hit: Hit = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      const index = hits.push(hit) - 1;
      for (const w of waiters.splice(0)) {
        if (hits.length >= w.n) w.resolve();
        else waiters.push(w);
      }
      void Promise.resolve(handler(req, res, hit, index)).catch((e: unknown) => {
        res.statusCode = 599;
        res.end(String(e));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    hits,
    waitForHits(n) {
      if (hits.length >= n) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ n, resolve }));
    },
    close() {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** Sends a JSON answer. */
export function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

/** A debug-level logger whose lines are kept in `lines`. */
export function capturingLogger(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, cb) {
      lines.push(chunk.toString('utf8'));
      cb();
    },
  });
  return { logger: createLogger({ level: 'debug', destination }), lines };
}
