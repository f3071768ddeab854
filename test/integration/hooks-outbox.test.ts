// Hooks: the outbox rows the triggers write in the transaction of each state change (a
// real engine run against the simulator), then delivered by the sender to a real HTTP
// receiver on loopback: signed, every event, in order per lead; retried with backoff
// while the receiver fails; a 410 disables the hook.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { syncHookSubscriptions } from '../../src/store/hook-outbox.js';
import { retryDelayMs, startHookSender, type HookSender } from '../../src/hooks/sender.js';
import { verifySignature } from '../../src/hooks/signature.js';
import { silentLogger } from '../../src/log/logger.js';
import { phoneNumbers, startStack, type Stack } from '../helpers/stack.js';
import { waitUntil } from '../helpers/wait.js';

const SECRET = 'hook-secret-0123456789';
let stack: Stack | null = null;
let sender: HookSender | null = null;
let server: http.Server | null = null;
afterEach(async () => {
  await sender?.stop();
  sender = null;
  await stack?.close();
  stack = null;
  await new Promise((r) => (server ? server.close(r) : r(undefined)));
  server = null;
});

interface Received {
  body: string;
  signature: string;
  event: { id: string; type: string; created_at: string; data: { campaign: { name: string } | null; lead: { id: number; state: string } | null; attempt: { id: number; outcome: string } | null } };
}

/** A receiver that answers `answer()` to each POST and keeps what it accepted. */
async function receiver(answer: (eventId: string) => number): Promise<{ url: string; got: Received[]; tries: () => number; seen: string[] }> {
  const got: Received[] = [];
  const seen: string[] = [];
  let tries = 0;
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      tries++;
      const body = Buffer.concat(chunks).toString('utf8');
      const id = (JSON.parse(body) as { id: string }).id;
      seen.push(id);
      const status = answer(id);
      if (status >= 200 && status < 300) got.push({ body, signature: String(req.headers['x-campaignd-signature']), event: JSON.parse(body) as Received['event'] });
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, got, tries: () => tries, seen };
}

async function runCampaign(url: string, numbers: string[]): Promise<void> {
  stack = await startStack({
    startEngine: false,
    campaigns: [{ settings: { maxCallsInParallel: 2, maxRetries: 1, retryIntervalSeconds: 60, markCompleteWhenNoLeads: true }, leads: numbers.map((phone) => ({ phone })) }],
    fixedOutcomes: [
      { phone_number: numbers[0]!, status: 'completed', answered_by: 'human', duration: 10 },
      { phone_number: numbers[1]!, status: 'busy', duration: 1 },
      { phone_number: numbers[2]!, status: 'busy', duration: 1, count: 1 },
      { phone_number: numbers[2]!, status: 'completed', answered_by: 'human', duration: 10 },
    ],
  });
  await syncHookSubscriptions(stack.db, [{ url, events: ['attempt.ended', 'lead.final', 'campaign.completed'] }]);
  await stack.startEngine();
  await stack.waitForQuiet();
  await waitUntil(async () => (await stack!.db.selectFrom('campaigns').select('state').executeTakeFirstOrThrow()).state === 'completed', { message: 'the campaign completed' });
}

describe('hooks', () => {
  it('every state change leaves its events in the outbox; the sender delivers them signed, in order per lead', async () => {
    const numbers = phoneNumbers(3);
    const r = await receiver(() => 200);
    await runCampaign(r.url, numbers);
    const attempts = await stack!.db.selectFrom('attempts').select(['id', 'lead_id']).where('state', '=', 'ended').execute();
    const outbox = await stack!.db.selectFrom('hook_outbox').select(['type', 'lead_id']).orderBy('id').execute();
    expect(outbox.filter((o) => o.type === 'attempt.ended')).toHaveLength(attempts.length);
    expect(outbox.filter((o) => o.type === 'lead.final')).toHaveLength(3);
    expect(outbox.filter((o) => o.type === 'campaign.completed')).toHaveLength(1);

    sender = startHookSender({ db: stack!.db, clock: stack!.clock, logger: silentLogger(), hooks: [{ url: r.url, secretEnv: 'S' }], secret: () => SECRET });
    await waitUntil(() => r.got.length === outbox.length, { message: `${outbox.length} events received` });
    await waitUntil(async () => (await stack!.db.selectFrom('hook_outbox').select('id').execute()).length === 0, { message: 'the outbox emptied' });
    for (const g of r.got) expect(verifySignature(SECRET, g.body, g.signature)).toBe(true);
    expect(verifySignature('another secret', r.got[0]!.body, r.got[0]!.signature)).toBe(false);
    // In order per lead: each lead's attempts ended before the lead was final.
    for (const lead of new Set(attempts.map((a) => a.lead_id))) {
      const types = r.got.filter((g) => g.event.data.lead?.id === lead).map((g) => g.event.type);
      expect(types.at(-1)).toBe('lead.final');
      expect(types.filter((t) => t === 'attempt.ended')).toHaveLength(attempts.filter((a) => a.lead_id === lead).length);
    }
    const final = r.got.find((g) => g.event.type === 'lead.final' && g.event.data.attempt?.outcome === 'success')!;
    expect(final.event).toMatchObject({ data: { campaign: { name: 'campaign-1' }, lead: { state: 'completed' }, attempt: { outcome: 'success' } } });
    expect(final.event.id).toMatch(/^[0-9a-f]{32}$/);
    expect(new Set(r.got.map((g) => g.event.id)).size).toBe(r.got.length);
  });

  it('a failing receiver gets the same event (same id) again with backoff, and every event arrives, in order per lead', async () => {
    const numbers = phoneNumbers(3);
    // Each event fails twice (a 503, then a refused-looking 500) before it is taken.
    const r = await receiver((id) => (r.seen.filter((s) => s === id).length <= 2 ? 503 : 200));
    await runCampaign(r.url, numbers);
    const expected = (await stack!.db.selectFrom('hook_outbox').select(['event_id', 'lead_id']).orderBy('id').execute());
    sender = startHookSender({ db: stack!.db, clock: stack!.clock, logger: silentLogger(), hooks: [{ url: r.url, secretEnv: 'S' }], secret: () => SECRET, random: () => 0 });
    await waitUntil(() => r.got.length === expected.length, { message: () => `${expected.length} events received, got ${r.got.length}, tries ${r.seen.length}`, timeoutMs: 25_000 });
    for (const e of expected) expect(r.seen.filter((s) => s === e.event_id)).toHaveLength(3);
    for (const lead of new Set(expected.map((e) => e.lead_id))) {
      const want = expected.filter((e) => e.lead_id === lead).map((e) => e.event_id);
      expect(r.got.filter((g) => want.includes(g.event.id)).map((g) => g.event.id)).toEqual(want);
    }
  });

  it('a 410 disables the hook and drops its backlog', async () => {
    const numbers = phoneNumbers(3);
    const r = await receiver(() => 410);
    await runCampaign(r.url, numbers);
    expect((await stack!.db.selectFrom('hook_outbox').select('id').execute()).length).toBeGreaterThan(0);
    sender = startHookSender({ db: stack!.db, clock: stack!.clock, logger: silentLogger(), hooks: [{ url: r.url, secretEnv: 'S' }], secret: () => SECRET });
    await waitUntil(async () => (await stack!.db.selectFrom('hook_states').selectAll().execute()).length === 1, { message: 'the hook disabled by its 410' });
    expect(await stack!.db.selectFrom('hook_outbox').select('id').execute()).toEqual([]);
    expect(await stack!.db.selectFrom('hook_subscriptions').selectAll().execute()).toEqual([]);
    expect(r.got).toEqual([]);
  });

  it('backoff doubles from 1 s to at most an hour, with jitter in [1/2, 1] of it', () => {
    expect(retryDelayMs(0, () => 1)).toBe(1000);
    expect(retryDelayMs(0, () => 0)).toBe(500);
    expect(retryDelayMs(3, () => 1)).toBe(8000);
    expect(retryDelayMs(40, () => 1)).toBe(3600_000);
    expect(retryDelayMs(40, () => 0)).toBe(1800_000);
  });
});
