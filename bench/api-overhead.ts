// `npx tsx bench/api-overhead.ts [--quick]`: what the API's own dispatcher (src/api/api.ts:
// route matching, the key check, zod validation of path, query and body, the JSON answer)
// costs per request over a bare node:http handler answering the same JSON — the most any
// HTTP framework could save us. Both servers run in this process on loopback; the client is
// undici's Pool, one connection (latency, sequential) and 16 (throughput). The key check is
// a function that says yes: the store's lookup is measured in bench/api.ts, whole.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';
import { z } from 'zod';
import { createApi } from '../src/api/api.js';
import { defineRoute } from '../src/api/route.js';
import { requestSchema, responseSchema } from '../src/api/schemas.js';
import { silentLogger } from '../src/log/logger.js';
import { systemClock } from '../src/time/clock.js';
import { isQuick, reportFigure } from './lib/figures.js';
import { fmt, percentile } from './lib/stats.js';

const BENCH = 'api-overhead';
const quick = isQuick();
const SEQUENTIAL = quick ? 2_000 : 10_000;
const THROUGHPUT_MS = quick ? 3_000 : 5_000;
const ROUNDS = quick ? 3 : 5;

const Lead = requestSchema('BenchLead', z.strictObject({ phone_number: z.string().min(3), variables: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()])).optional() }));
const Answer = responseSchema('BenchAnswer', z.object({ id: z.number(), ok: z.boolean() }));
const routes = [
  defineRoute<{ id: number }>({
    method: 'GET',
    path: '/echo/{id}',
    operationId: 'benchGet',
    summary: 'bench',
    tag: 'bench',
    scope: 'read',
    params: z.object({ id: z.coerce.number().int().positive() }),
    responses: { 200: { description: 'ok', schema: Answer } },
    handle: async ({ params }) => ({ status: 200, body: { id: params.id, ok: true } }),
  }),
  defineRoute<undefined, undefined, z.infer<typeof Lead>>({
    method: 'POST',
    path: '/echo',
    operationId: 'benchPost',
    summary: 'bench',
    tag: 'bench',
    scope: 'write',
    body: Lead,
    responses: { 201: { description: 'ok', schema: Answer } },
    handle: async ({ body }) => ({ status: 201, body: { id: body.phone_number.length, ok: true } }),
  }),
];

const api = createApi(
  {
    db: null as never,
    clock: systemClock,
    logger: silentLogger(),
    wake: () => undefined,
    authorize: async () => ({ ok: true, keyName: 'bench' }),
    version: 'bench',
    hostname: 'bench',
    isPidAlive: () => true,
  },
  routes,
);

function serve(handler: http.RequestListener): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer(handler);
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({ url: `http://127.0.0.1:${port}`, close: () => new Promise((r) => server.close(() => r())) });
    });
  });
}

/** The same answers, written by hand: what node:http costs alone. */
const bare: http.RequestListener = (req, res) => {
  const send = (status: number, body: unknown): void => {
    const text = `${JSON.stringify(body)}\n`;
    res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(text) });
    res.end(text);
  };
  if (req.method === 'GET') return send(200, { id: Number(req.url!.split('/').pop()), ok: true });
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => send(201, { id: (JSON.parse(Buffer.concat(chunks).toString()) as { phone_number: string }).phone_number.length, ok: true }));
};

const body = JSON.stringify({ phone_number: '+12025550123', variables: { first_name: 'Ada', plan: 'gold' } });

async function once(pool: Pool, kind: 'get' | 'post', prefix: string): Promise<void> {
  const r =
    kind === 'get'
      ? await pool.request({ method: 'GET', path: `${prefix}/echo/42`, headers: { authorization: 'Bearer x' } })
      : await pool.request({ method: 'POST', path: `${prefix}/echo`, headers: { authorization: 'Bearer x', 'content-type': 'application/json' }, body });
  await r.body.text();
  if (r.statusCode >= 300) throw new Error(`answered ${r.statusCode}`);
}

async function measure(url: string, prefix: string, kind: 'get' | 'post'): Promise<{ p50: number; p99: number; rps: number }> {
  const one = new Pool(url, { connections: 1 });
  for (let i = 0; i < 500; i++) await once(one, kind, prefix); // warm-up
  const lat: number[] = [];
  for (let i = 0; i < SEQUENTIAL; i++) {
    const t0 = performance.now();
    await once(one, kind, prefix);
    lat.push((performance.now() - t0) * 1000);
  }
  await one.close();
  const many = new Pool(url, { connections: 16 });
  let done = 0;
  const until = performance.now() + THROUGHPUT_MS;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (performance.now() < until) {
        await once(many, kind, prefix);
        done++;
      }
    }),
  );
  await many.close();
  return { p50: percentile(lat, 0.5), p99: percentile(lat, 0.99), rps: done / (THROUGHPUT_MS / 1000) };
}

const plain = await serve(bare);
const dispatched = await serve((req, res) => void api.handle(req, res, new URL(req.url ?? '/', 'http://x')));
try {
  console.log(`${BENCH}: the API dispatcher vs a bare node:http handler, ${SEQUENTIAL} sequential requests and ${THROUGHPUT_MS / 1000} s at 16 connections each`);
  for (const kind of ['get', 'post'] as const) {
    // Alternated rounds, so a burst of load on the machine falls on both sides alike.
    const bares: Awaited<ReturnType<typeof measure>>[] = [];
    const apis: Awaited<ReturnType<typeof measure>>[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      bares.push(await measure(plain.url, '', kind));
      apis.push(await measure(dispatched.url, '/api/v1', kind));
      const [b, a] = [bares.at(-1)!, apis.at(-1)!];
      console.log(`  ${kind} round ${round + 1}: bare p50 ${fmt(b.p50, 0)} µs p99 ${fmt(b.p99, 0)} µs ${fmt(b.rps, 0)} req/s; dispatcher p50 ${fmt(a.p50, 0)} µs p99 ${fmt(a.p99, 0)} µs ${fmt(a.rps, 0)} req/s`);
    }
    const med = (xs: number[]): number => percentile(xs, 0.5);
    const [b50, a50] = [med(bares.map((x) => x.p50)), med(apis.map((x) => x.p50))];
    const [brps, arps] = [med(bares.map((x) => x.rps)), med(apis.map((x) => x.rps))];
    reportFigure(BENCH, `dispatcher overhead per ${kind.toUpperCase()}, median`, a50 - b50, 'µs', undefined, `sequential, median of ${ROUNDS} rounds; bare node:http ${fmt(b50, 0)} µs, dispatcher ${fmt(a50, 0)} µs`);
    reportFigure(BENCH, `${kind.toUpperCase()} throughput, dispatcher / bare`, arps / brps, 'ratio', undefined, `16 connections, median of ${ROUNDS} rounds; ${fmt(arps, 0)} vs ${fmt(brps, 0)} req/s`);
  }
} finally {
  await plain.close();
  await dispatched.close();
}
