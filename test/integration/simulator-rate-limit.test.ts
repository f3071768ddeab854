import { afterEach, describe, expect, it } from 'vitest';
import { parseRateLimit } from '../../src/simulator/rate-limit.js';
import type { RunningSimulator } from '../../src/simulator/server.js';
import { startTestSim } from './simulator-fixture.js';

const open: RunningSimulator[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

async function setup() {
  const t = await startTestSim({ rateLimit: parseRateLimit('100/min') });
  open.push(t.sim);
  return t;
}

describe('rate-limit emulation (100/min, bursts of 20 per 10 s)', () => {
  it('allows a burst of 20, then answers 429 with the wait and the headers', async () => {
    const { a, b, clock } = await setup();
    for (let i = 0; i < 20; i++) {
      const res = await a.get('/api/user/campaigns');
      expect(res.status).toBe(200);
      expect(res.headers.get('x-ratelimit-limit')).toBe('100');
      expect(res.headers.get('x-ratelimit-remaining')).toBe(String(100 - i - 1));
    }
    const limited = await a.get('/api/user/campaigns');
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({ error: 'Rate limit exceeded', message: 'Too many requests. Please try again later.', retry_after: 10 });
    expect(limited.headers.get('retry-after')).toBe('10');
    expect(limited.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(Number(limited.headers.get('x-ratelimit-reset'))).toBe(Math.ceil((clock.now() + 10_000) / 1000));
    // Another token has its own budget.
    expect((await b.get('/api/user/campaigns')).status).toBe(200);
    await clock.advance(10_000);
    expect((await a.get('/api/user/campaigns')).status).toBe(200);
  });

  it('caps a minute at 100 requests even when bursts are spread out', async () => {
    const { a, clock } = await setup();
    let ok = 0;
    for (let window = 0; window < 6; window++) {
      for (let i = 0; i < 20; i++) if ((await a.get('/api/user/campaigns')).status === 200) ok++;
      await clock.advance(10_000);
    }
    // 6 windows of 20 within 60 s: only 100 pass; the sixth window is refused.
    expect(ok).toBe(100);
    const limited = await a.get('/api/user/campaigns');
    expect(limited.status).toBe(200); // at t=60 s the first burst has left the minute
  });

  it('parses --rate-limit forms and refuses nonsense', () => {
    expect(parseRateLimit('100/min')).toEqual({ perMinute: 100, burst: 20, burstWindowSeconds: 10 });
    expect(parseRateLimit('10')).toEqual({ perMinute: 10, burst: 10, burstWindowSeconds: 10 });
    expect(() => parseRateLimit('fast')).toThrow(RangeError);
  });
});
