// Call results through the real engine: the simulator's webhooks and call list fill
// call_results; bad result fields in a webhook are left out with a log line while the
// outcome is applied and dialing goes on.
import { afterEach, describe, expect, it } from 'vitest';
import { allSucceed, phoneNumbers, startStack, type Stack } from '../helpers/stack.js';
import { waitUntil } from '../helpers/wait.js';
import { capturingLogger } from './client-fixture.js';

let stack: Stack | null = null;
afterEach(async () => {
  await stack?.close();
  stack = null;
});

describe('results: kept per attempt', () => {
  it('webhook and call list together fill each ended call: status, answered_by, duration, cost, recording URL, transcript', async () => {
    const numbers = phoneNumbers(4);
    stack = await startStack({
      campaigns: [{ settings: { maxCallsInParallel: 2, maxRetries: 0 }, leads: numbers.map((phone) => ({ phone })) }],
      fixedOutcomes: [...allSucceed(numbers.slice(0, 2), 30), ...numbers.slice(2).map((phone_number) => ({ phone_number, status: 'busy', duration: 2 }))],
    });
    await stack.waitForQuiet();
    await stack.sim.state.settled();
    const rows = await stack.db
      .selectFrom('call_results')
      .innerJoin('attempts', 'attempts.id', 'call_results.attempt_id')
      .select(['attempts.phone_number', 'attempts.call_id as attempt_call_id', 'call_results.call_id', 'status', 'call_results.answered_by', 'duration_seconds', 'recording_url', 'cost', 'transcript_json', 'extracted_json', 'source', 'started_at'])
      .execute();
    expect(rows).toHaveLength(4);
    const calls = new Map(stack.simCalls().map((c) => [String(c.id), c]));
    for (const row of rows) {
      const call = calls.get(row.call_id!);
      expect(call, `the simulator's call ${row.call_id}`).toBeDefined();
      expect(row.attempt_call_id).toBe(row.call_id);
      expect(row.status).toBe(call!.status);
      expect(row.started_at).not.toBeNull();
      expect(row.source.split(',')[0]).toMatch(/^(webhook|poll)$/);
      if (numbers.slice(0, 2).includes(row.phone_number)) {
        // A success is confirmed by the call list (who answered), and its webhook fills the
        // rest: both sources, in whichever order they came (a listing may see the call ended
        // before its webhook arrives; `source` names the first one, that order is no promise).
        expect(row.answered_by).toBe('human');
        expect(row.source.split(',').sort()).toEqual(['poll', 'webhook']);
        expect(row.duration_seconds).toBe(call!.duration);
        expect(row.recording_url).toBe(call!.recording_url);
        expect(row.cost).toBe(call!.total_cost);
        expect(JSON.parse(row.transcript_json!)).toBe(call!.transcript);
        expect(JSON.parse(row.extracted_json ?? '{}')).toEqual(call!.variables ?? {});
      }
    }
  });

  it('a webhook with a non-object extracted_variables, a recording URL that is no URL and a large transcript: outcome applied, fields judged, lines logged', async () => {
    const numbers = phoneNumbers(3);
    const logs = capturingLogger();
    // Real time and hour-long calls: nothing ends unless a webhook ends it.
    stack = await startStack({
      scale: 1,
      webhooks: false,
      callIdInResponse: true,
      logger: logs.logger,
      callDurationSeconds: { min: 3600, max: 3600 },
      campaigns: [{ settings: { maxCallsInParallel: 2, maxRetries: 0 }, leads: numbers.map((phone) => ({ phone })) }],
    });
    const placed = async () => stack!.db.selectFrom('attempts').select(['id', 'call_id', 'phone_number']).where('state', '=', 'placed').where('call_id', 'is not', null).orderBy('id').execute();
    await waitUntil(async () => (await placed()).length === 2, { message: 'two placed calls' });
    const [first, second] = await placed();
    const big = 'z'.repeat(900 * 1024);
    const post = (body: unknown) => fetch(stack!.webhookUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const bad = await post({ id: Number(first!.call_id), customer_phone: first!.phone_number, status: 'completed', duration: 12, extracted_variables: 'interested', recording_url: 'not a url', transcript: big });
    expect(bad.status).toBe(200);
    const good = await post({ id: Number(second!.call_id), customer_phone: second!.phone_number, status: 'busy', duration: 0, extracted_variables: { callback: 'tomorrow' }, recording_url: 'https://rec.example/a b.mp3', transcript: [{ text: 'Hallo', sender: 'AI' }] });
    expect(good.status).toBe(200);
    // Both outcomes applied; the third lead is dialled in a freed slot: nothing stopped.
    await waitUntil(async () => (await stack!.db.selectFrom('attempts').select('id').where('phone_number', '=', numbers[2]!).execute()).length === 1, { message: 'the third lead dialled' });
    const results = await stack.db.selectFrom('call_results').selectAll().orderBy('attempt_id').execute();
    expect(results).toHaveLength(2);
    expect(results[0]).toMatchObject({ attempt_id: first!.id, status: 'completed', duration_seconds: 12, extracted_json: null, recording_url: null, transcript_json: JSON.stringify(big) });
    expect(results[1]).toMatchObject({ attempt_id: second!.id, status: 'busy', extracted_json: '{"callback":"tomorrow"}', recording_url: 'https://rec.example/a%20b.mp3', transcript_json: '[{"text":"Hallo","sender":"AI"}]' });
    const text = logs.lines.join('');
    expect(text).toContain('call result: extracted_variables is text, not an object of NAME: value: not kept');
    expect(text).toContain('call result: recording_url \\"not a url\\" is not a URL: not kept');
  });
});
