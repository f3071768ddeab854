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

  it('counts its own refusals as trips, apart from 429s injected as faults', async () => {
    const { a, sim, controls } = await setup();
    for (let i = 0; i < 22; i++) await a.get('/api/user/campaigns');
    expect(sim.state.rateLimitStats).toEqual({ allowed: 20, trips: 2, refused: 2, injected: 0 });
    const fault = await controls.post('/__sim/faults', { rate_limited: 1, retry_after: 3 });
    expect(fault.status).toBe(200);
    await a.get('/api/user/campaigns');
    await controls.post('/__sim/reset-faults');
    const stats = await controls.get('/__sim/stats');
    expect(stats.body).toEqual({ rate_limit: { allowed: 20, trips: 3, refused: 3, injected: 0 } });
  });

  it('gives an injected 429 headers that agree with its retry_after, and counts it apart', async () => {
    const { sim, clock, controls, b } = await setup();
    await controls.post('/__sim/faults', { rate_limited: 1, retry_after: 3 });
    // The limiter lets the request through (it is counted), and the fault answers it.
    const res = await b.get('/api/user/campaigns');
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('3');
    expect(res.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(Number(res.headers.get('x-ratelimit-reset'))).toBe(Math.ceil(clock.now() / 1000) + 3);
    expect(sim.state.rateLimitStats).toMatchObject({ trips: 0, injected: 1 });
  });

  it('with a lockout, refuses everything for the whole lockout after a trip (one trip, many refusals)', async () => {
    const t = await startTestSim({ rateLimit: parseRateLimit('100/min,lockout=60') });
    open.push(t.sim);
    const { a, clock, sim } = t;
    for (let i = 0; i < 20; i++) expect((await a.get('/api/user/campaigns')).status).toBe(200);
    const tripped = await a.get('/api/user/campaigns');
    expect(tripped.status).toBe(429);
    expect(tripped.body.retry_after).toBe(60);
    await clock.advance(30_000);
    const locked = await a.get('/api/user/campaigns');
    expect(locked.status).toBe(429);
    expect(locked.headers.get('retry-after')).toBe('30');
    expect(sim.state.rateLimitStats).toMatchObject({ allowed: 20, trips: 1, refused: 2 });
    await clock.advance(30_000);
    expect((await a.get('/api/user/campaigns')).status).toBe(200);
  });

  it('parses --rate-limit forms and refuses nonsense', () => {
    expect(parseRateLimit('100/min')).toEqual({ perMinute: 100, burst: 20, burstWindowSeconds: 10 });
    expect(parseRateLimit('10')).toEqual({ perMinute: 10, burst: 10, burstWindowSeconds: 10 });
    expect(parseRateLimit('100/min,lockout=60')).toEqual({ perMinute: 100, burst: 20, burstWindowSeconds: 10, lockoutSeconds: 60 });
    expect(() => parseRateLimit('fast')).toThrow(RangeError);
  });
});
