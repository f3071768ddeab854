/**
 * Client overhead: requests per second through the client (budget, transport, parsing)
 * against a local HTTP server, and records parsed per second by the liberal schemas.
 * Run: npx tsx bench/client-throughput.ts
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { systemClock } from '../src/time/clock.js';
import { silentLogger } from '../src/log/logger.js';
import { createServiceClient } from '../src/service/client.js';
import { callSchema } from '../src/service/schema/records.js';

const REQUESTS = 5_000;
const CONCURRENCY = 64;

function callRecord(i: number): Record<string, unknown> {
  return {
    id: i % 2 ? String(i) : i,
    assistant_name: 'Sales',
    type: 'outbound',
    duration: 42,
    client_phone_number: '+14155550100',
    status: 'completed',
    transcript: i % 2 ? 'AI: hello\nuser: hi' : [{ text: 'hello', sender: 'AI', type: 'bot', timestamp: 1 }],
    variables: i % 3 ? {} : [],
    carrier_cost: '0.0125',
    total_cost: 0.05,
    answered_by: i % 5 ? 'human' : null,
    created_at: '2026-01-05 09:00:00',
    updated_at: '2026-01-05 09:01:00',
  };
}

const page = JSON.stringify({ current_page: 1, last_page: 1, next_page_url: null, data: Array.from({ length: 15 }, (_, i) => callRecord(i)) });
const server = createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(page);
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const { port } = server.address() as AddressInfo;
const client = createServiceClient({
  baseUrl: `http://127.0.0.1:${port}`,
  getToken: () => 'bench-token',
  clock: systemClock,
  logger: silentLogger(),
  rateLimit: { requestsPerMinute: 1e9, burst: 1e6 },
});

const latencies: number[] = [];
let next = 0;
const t0 = performance.now();
await Promise.all(
  Array.from({ length: CONCURRENCY }, async () => {
    while (next++ < REQUESTS) {
      const s = performance.now();
      await client.listCalls({ per_page: 15 });
      latencies.push(performance.now() - s);
    }
  }),
);
const elapsed = (performance.now() - t0) / 1000;
latencies.sort((a, b) => a - b);
const pct = (p: number): string => (latencies[Math.floor((latencies.length - 1) * p)] ?? 0).toFixed(2);
console.log(`list_calls over HTTP: ${REQUESTS} requests, concurrency ${CONCURRENCY}: ${(REQUESTS / elapsed).toFixed(0)} req/s; latency p50 ${pct(0.5)} ms, p99 ${pct(0.99)} ms`);
await client.close();
server.close();

const records = Array.from({ length: 100_000 }, (_, i) => callRecord(i));
const p0 = performance.now();
for (const r of records) callSchema.parse(r);
const parseSecs = (performance.now() - p0) / 1000;
console.log(`callSchema.parse: ${(records.length / parseSecs).toFixed(0)} records/s`);
