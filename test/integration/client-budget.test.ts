import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/time/clock.js';
import { silentLogger } from '../../src/log/logger.js';
import { createServiceClient, type ServiceClient } from '../../src/service/client.js';
import { json, startFakeService, type FakeService } from './client-fixture.js';

let service: FakeService | undefined;
let client: ServiceClient | undefined;
afterEach(async () => {
  await client?.close();
  await service?.close();
  client = undefined;
  service = undefined;
});

/** Largest number of stamps inside any half-open window of `width` ms. */
function maxInWindow(times: number[], width: number): number {
  const t = [...times].sort((a, b) => a - b);
  let best = 0;
  let lo = 0;
  for (let hi = 0; hi < t.length; hi++) {
    while ((t[hi] ?? 0) - (t[lo] ?? 0) >= width) lo++;
    best = Math.max(best, hi - lo + 1);
  }
  return best;
}

describe('the shared rate budget over real HTTP', () => {
  it('is never exceeded under 1,000 concurrent requests (counted by the server)', async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 5, 9));
    const start = clock.now();
    const arrivals: number[] = [];
    service = await startFakeService((_req, res) => {
      arrivals.push(clock.now() - start);
      json(res, 200, []);
    });
    client = createServiceClient({ baseUrl: service.url, getToken: () => 'token-abcd', clock, logger: silentLogger(), rateLimit: { requestsPerMinute: 100, burst: 20 } });
    const c = client;
    const all = Promise.all(Array.from({ length: 1000 }, (_, i) => (i % 3 === 0 ? c.listPhoneNumbers() : c.listCampaigns())));
    // Time moves only once every request let through so far has reached the server,
    // so each arrival is stamped with the instant the budget released it.
    while (arrivals.length < 1000) {
      await service.waitForHits(c.budget.stats().granted);
      await clock.advance(600);
    }
    const results = await all;
    expect(results).toHaveLength(1000);
    expect(maxInWindow(arrivals, 60_000)).toBeLessThanOrEqual(100);
    expect(maxInWindow(arrivals, 1)).toBeLessThanOrEqual(20);
    // Both windows of the service's limiter, as the server counted them.
    expect(maxInWindow(arrivals, 10_000)).toBeLessThanOrEqual(20);
    // 1,000 requests at 100 a minute: about ten minutes, not much more.
    expect(Math.max(...arrivals)).toBeLessThanOrEqual(10 * 60_000);
    expect(Math.max(...arrivals)).toBeGreaterThanOrEqual(9 * 60_000);
  });

  it('sends a waiting make_call before reads that waited longer', async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 5, 9));
    service = await startFakeService((req, res) =>
      req.url === '/api/user/make_call' ? json(res, 200, { message: 'Call initiated successfully', data: {} }) : json(res, 200, []),
    );
    client = createServiceClient({ baseUrl: service.url, getToken: () => 'token-abcd', clock, logger: silentLogger(), rateLimit: { requestsPerMinute: 60, burst: 1, burstWindowSeconds: 1, marginMs: 0 } });
    await client.listModels();
    const reads = [client.listCampaigns(), client.listVoices(), client.listCampaigns()];
    const call = client.makeCall({ phone_number: '+14155550100', assistant_id: 1 });
    expect(client.budget.stats().waiting).toBe(4);
    await clock.advance(1000);
    await call;
    for (let i = 0; i < 3; i++) {
      await service.waitForHits(client.budget.stats().granted);
      await clock.advance(1000);
    }
    await Promise.all(reads);
    expect(service.hits.map((h) => h.url)).toEqual([
      '/api/user/assistants/models',
      '/api/user/make_call',
      '/api/user/campaigns',
      '/api/user/assistants/voices',
      '/api/user/campaigns',
    ]);
  });
});
