// Rules on the result (README, "On the result") through the whole stack: the simulator
// extracts variables per number (/__sim/extracted), the webhook and the call list report
// them, and each `then` of the campaign's on_result rules decides the lead's next step.
import { afterEach, describe, expect, it } from 'vitest';
import { explainNumber } from '../../src/explain/explain.js';
import type { ResultRule } from '../../src/config/result-rule-types.js';
import { claimAttempts, unconfirmedCountsByCampaign } from '../../src/store/attempts.js';
import { applyObservation, type OutcomeContext } from '../../src/engine/outcomes.js';
import { runtimeCampaign } from '../../src/engine/runtime-campaign.js';
import { getCampaignById } from '../../src/store/campaigns.js';
import type { AttemptRow } from '../../src/store/types.js';
import { mergeCallResult } from '../../src/store/results.js';
import { readGivenCall } from '../../src/results/given.js';
import { exportResults } from '../../src/results/export.js';
import { campaignNames, setCampaignState } from '../../src/store/campaigns.js';
import { startStack, waitUntil, type Stack } from '../helpers/stack.js';

const MOVE = '+12025550301';
const WRONG = '+12025550302';
const STOP = '+12025550303';
const BUSY = '+12025550304';
const NO_ANSWER = '+12025550305';
const FAILS = '+12025550306';
const ALREADY = '+12025550307';
const MACHINE = '+12025550308';

const rules: ResultRule[] = [
  { position: 1, variable: { name: 'outcome', equals: 'wrong number' }, then: { kind: 'invalid' } },
  { position: 2, variable: { name: 'reason', in: ['stop', 'never'] }, then: { kind: 'suppress' } },
  { position: 3, answeredBy: ['machine'], then: { kind: 'complete' } },
  { position: 4, variable: { name: 'interest', matches: '^y' }, then: { kind: 'move-to', campaign: 'sales' } },
  { position: 5, status: ['busy'], then: { kind: 'retry-in', seconds: 7200 } },
  { position: 6, status: ['no-answer'], then: { kind: 'complete' } },
];

describe('on_result through the stack', () => {
  let stack: Stack | undefined;
  afterEach(async () => {
    await stack?.close();
    stack = undefined;
  });

  it('applies each then to the final outcome: invalid, suppress, complete, move_to, retry_in; no match keeps the retry settings', async () => {
    stack = await startStack({
      scale: 1500,
      startEngine: false,
      campaigns: [
        {
          name: 'main',
          settings: { onResult: rules, maxRetries: 1, retryIntervalSeconds: 60 },
          leads: [MOVE, WRONG, STOP, BUSY, NO_ANSWER, FAILS, ALREADY, MACHINE].map((phone) => ({ phone })),
        },
        // The target campaign already has ALREADY as a lead; it is paused so that ALREADY's
        // own lead there is not called before the move, and resumed afterwards.
        { name: 'sales', settings: { initialStatus: 'paused' }, leads: [{ phone: ALREADY }] },
      ],
      fixedOutcomes: [
        { phone_number: MOVE, status: 'completed', answered_by: 'human', duration: 30 },
        { phone_number: WRONG, status: 'completed', answered_by: 'human', duration: 30 },
        { phone_number: STOP, status: 'completed', answered_by: 'human', duration: 30 },
        { phone_number: BUSY, status: 'busy', count: 1 },
        { phone_number: BUSY, status: 'completed', answered_by: 'human', duration: 30 },
        { phone_number: NO_ANSWER, status: 'no-answer' },
        { phone_number: FAILS, status: 'failed' },
        { phone_number: ALREADY, status: 'completed', answered_by: 'human', duration: 30 },
        { phone_number: MACHINE, status: 'completed', answered_by: 'machine', duration: 30 },
      ],
    });
    const s = stack;
    await s.control('/__sim/extracted', { phone_number: MOVE, variables: { interest: 'Yes', budget: '500' } });
    await s.control('/__sim/extracted', { phone_number: WRONG, variables: { outcome: 'Wrong Number' } });
    await s.control('/__sim/extracted', { phone_number: STOP, variables: { reason: 'stop' } });
    await s.control('/__sim/extracted', { phone_number: ALREADY, variables: { interest: 'yes' } });
    // A machine "says" interest too: the webhook reports a success, the call list a machine; rule 3 wins on the final outcome.
    await s.control('/__sim/extracted', { phone_number: MACHINE, variables: { interest: 'yes' } });
    await s.startEngine();

    const lead = async (campaign: string, phone: string) =>
      s.db
        .selectFrom('leads')
        .innerJoin('campaigns', 'campaigns.id', 'leads.campaign_id')
        .select(['leads.id', 'leads.state', 'leads.state_reason', 'leads.variables_json', 'leads.source_file'])
        .where('campaigns.name', '=', campaign)
        .where('leads.phone_number', '=', phone)
        .execute();
    const one = async (campaign: string, phone: string) => {
      const rows = await lead(campaign, phone);
      expect(rows, `${campaign} ${phone}`).toHaveLength(1);
      return rows[0]!;
    };
    const mainFinal = async () => {
      const rows = await s.db.selectFrom('leads').innerJoin('campaigns', 'campaigns.id', 'leads.campaign_id').select('leads.state').where('campaigns.name', '=', 'main').execute();
      return rows.every((r) => !['pending', 'calling', 'retry-scheduled'].includes(r.state));
    };
    const unconfirmed = async () => [...(await unconfirmedCountsByCampaign(s.db, 0)).values()].reduce((a, b) => a + b, 0);
    await waitUntil(async () => (await mainFinal()) && (await unconfirmed()) === 0, { timeoutMs: 60_000, message: async () => JSON.stringify(await s.db.selectFrom('leads').select(['phone_number', 'state', 'state_reason']).execute()) });

    expect(await one('main', WRONG)).toMatchObject({ state: 'invalid', state_reason: 'wrong number: on_result rule 1 (outcome = "wrong number")' });
    expect(await one('main', STOP)).toMatchObject({ state: 'suppressed', state_reason: 'suppressed by on_result rule 2 (reason in ["stop", "never"])' });
    expect((await s.db.selectFrom('suppressions').selectAll().where('phone_number', '=', STOP).executeTakeFirstOrThrow()).source).toBe('on_result:main');
    expect(await one('main', MACHINE)).toMatchObject({ state: 'completed', state_reason: 'on_result rule 3 (answered_by machine)' });
    expect(await lead('sales', MACHINE)).toEqual([]);
    expect(await one('main', NO_ANSWER)).toMatchObject({ state: 'completed', state_reason: 'on_result rule 6 (status no-answer)' });
    // No rule matches a failure: max_retries 1 gives two attempts, as without rules.
    expect(await one('main', FAILS)).toMatchObject({ state: 'reached-max-retries' });
    const calls = (phone: string) => s.simCalls().filter((c) => c.client_phone_number === phone);
    expect(calls(FAILS)).toHaveLength(2);
    expect(calls(NO_ANSWER)).toHaveLength(1);
    expect(calls(WRONG)).toHaveLength(1);

    // retry_in: the second call to BUSY comes two hours after the first ended, not retry_interval's minute.
    expect(await one('main', BUSY)).toMatchObject({ state: 'completed' });
    const [first, second] = calls(BUSY);
    expect(second!.createdAt - first!.finishedAt!).toBeGreaterThanOrEqual(7200_000);

    // move_to: the source ends `moved`, the target has exactly one lead with both sets of variables.
    const moved = await one('main', MOVE);
    expect(moved.state).toBe('moved');
    const target = await one('sales', MOVE);
    expect(moved.state_reason).toBe(`moved to sales by on_result rule 4 (interest matches /^y/); lead ${target.id} there`);
    expect(JSON.parse(target.variables_json)).toEqual({ name: 'lead 2', interest: 'Yes', budget: '500' });
    expect(target).toMatchObject({ state: 'pending', source_file: 'moved from campaign main' });
    // A number that is already a lead in the target stays that one lead.
    const already = await one('main', ALREADY);
    expect(already.state).toBe('moved');
    const existing = await one('sales', ALREADY);
    expect(already.state_reason).toContain(`the number was already lead ${existing.id} there, left as it is`);

    const explained = await explainNumber(s.db, MOVE, s.clock.now(), () => true);
    expect(explained.leads.find((l) => l.campaign === 'main')?.message).toBe(`${moved.state_reason}: it continues there`);
    // The results export lists the moved lead with its state and the rule's reason.
    const names = new Map((await campaignNames(s.db)).map((c) => [c.id, c.name]));
    const lines: string[] = [];
    await exportResults(s.db, { format: 'jsonl', scope: {}, campaignNames: names }, async (t) => void lines.push(t));
    const rows = lines.join('').trim().split('\n').map((l) => JSON.parse(l) as { campaign: string; phone_number: string; state: string; state_reason: string });
    expect(rows.find((r) => r.campaign === 'main' && r.phone_number === MOVE)).toMatchObject({ state: 'moved', state_reason: moved.state_reason });
    const byRule = await explainNumber(s.db, NO_ANSWER, s.clock.now(), () => true);
    expect(byRule.leads[0]?.message).toBe('completed by on_result rule 6 (status no-answer): it will not be called again');

    // Resumed, the target campaign calls the person with the variables of both.
    await setCampaignState(s.db, 'sales', 'running', s.clock.now());
    await waitUntil(() => calls(MOVE).length === 2, { timeoutMs: 30_000, message: () => JSON.stringify(calls(MOVE).map((c) => c.input_variables)) });
    expect(calls(MOVE)[1]!.input_variables).toMatchObject({ name: 'lead 2', interest: 'Yes', budget: '500' });
  }, 90_000);

  it('decides a webhook success the call list never shows when it becomes final, on the webhook\'s extracted variables', async () => {
    stack = await startStack({
      campaigns: [
        { name: 'main', settings: { onResult: rules, maxRetries: 1 }, leads: [{ phone: MOVE }] },
        { name: 'sales', settings: { initialStatus: 'paused' }, leads: [] },
      ],
      webhooks: false,
      startEngine: false,
    });
    const s = stack;
    // As a webhook left it before a restart: a success, its extracted variables kept, the lead completed.
    const lead = await s.db.selectFrom('leads').select(['id', 'campaign_id']).where('phone_number', '=', MOVE).executeTakeFirstOrThrow();
    const sentAt = s.clock.now() - 3_600_000;
    const [claim] = await claimAttempts(s.db, [{ campaignId: lead.campaign_id, leadId: lead.id, contactPosition: 0, phoneNumber: MOVE, assistantId: s.assistantId, owner: 'stopped-daemon', now: sentAt }]);
    if (!claim?.ok) throw new Error('could not stage the attempt');
    const id = claim.attempt.id;
    await s.db.updateTable('attempts').set({ state: 'placed', call_status: 'completed', outcome: 'success', outcome_source: 'webhook', answered_at: sentAt, ended_at: sentAt + 60_000 }).where('id', '=', id).execute();
    await s.db.updateTable('attempts').set({ state: 'ended' }).where('id', '=', id).execute();
    await s.db.updateTable('leads').set({ state: 'completed', next_due_at: null }).where('id', '=', lead.id).execute();
    const given = readGivenCall({ id: 'gone-1', status: 'completed', extracted_variables: { interest: 'yes' } }, 'UTC');
    await mergeCallResult(s.db, { attemptId: id, campaignId: lead.campaign_id, leadId: lead.id }, given.fields, { source: 'webhook', now: sentAt, keepTranscripts: true });

    await s.startEngine();
    const state = async () => (await s.db.selectFrom('leads').select('state').where('id', '=', lead.id).executeTakeFirstOrThrow()).state;
    await waitUntil(async () => (await state()) === 'moved', { timeoutMs: 30_000, message: state });
    expect((await s.db.selectFrom('attempts').select('outcome_source').where('id', '=', id).executeTakeFirstOrThrow()).outcome_source).toBe('webhook-final');
    const target = await s.db.selectFrom('leads').innerJoin('campaigns', 'campaigns.id', 'leads.campaign_id').select('leads.variables_json').where('campaigns.name', '=', 'sales').execute();
    expect(target.map((t) => JSON.parse(t.variables_json).interest)).toEqual(['yes']);
  }, 60_000);

  it('decides a confirmed webhook success again only when a rule or a callback can decide otherwise than the webhook did', async () => {
    const PLAIN = '+12025550309';
    stack = await startStack({
      startEngine: false,
      campaigns: [
        { name: 'main', settings: { onResult: rules, callbacks: { variable: 'callback_at', maxPerLead: 1, horizonDays: 14 }, maxRetries: 1 }, leads: [PLAIN, ALREADY].map((phone) => ({ phone })) },
        { name: 'sales', settings: { initialStatus: 'paused' }, leads: [] },
      ],
    });
    const s = stack;
    const main = runtimeCampaign((await getCampaignById(s.db, 1))!);
    expect(main.name).toBe('main');
    let now = s.clock.now();
    const ctx = { db: s.db, logger: undefined as never, commit: undefined as never, now: () => now, campaign: () => main, onSlotFreed: () => undefined } satisfies OutcomeContext;
    const decideAt = async (phone: string) => (await s.db.selectFrom('leads').select(['state', 'updated_at']).where('campaign_id', '=', main.id).where('phone_number', '=', phone).executeTakeFirstOrThrow());
    // PLAIN's call matches no rule and asks no callback (a blank one); ALREADY's matches rule 4 (move_to).
    const heard: Record<string, Record<string, string>> = { [PLAIN]: { interest: 'no', callback_at: ' ' }, [ALREADY]: { interest: 'yes' } };
    const attempts = new Map<string, AttemptRow>();
    for (const phone of [PLAIN, ALREADY]) {
      const lead = await s.db.selectFrom('leads').select('id').where('phone_number', '=', phone).executeTakeFirstOrThrow();
      const [claim] = await claimAttempts(s.db, [{ campaignId: main.id, leadId: lead.id, contactPosition: 0, phoneNumber: phone, assistantId: s.assistantId, owner: 'test', now }]);
      if (!claim?.ok) throw new Error('could not claim');
      attempts.set(phone, claim.attempt);
    }
    const observe = (phone: string, source: 'webhook' | 'poll') => {
      const a = attempts.get(phone)!;
      const given = { id: `call-${a.id}`, status: 'completed', ...(source === 'poll' ? { answered_by: 'human' } : {}), extracted_variables: heard[phone] };
      const obs = { callId: given.id, status: 'completed', answeredBy: source === 'poll' ? 'human' : undefined, endedAt: now, source, given };
      return s.db.transaction().execute(async (trx) => applyObservation(trx, ctx, (await trx.selectFrom('attempts').selectAll().where('id', '=', a.id).executeTakeFirstOrThrow()) as AttemptRow, obs));
    };
    // The webhook ends both calls: a provisional success, each lead completed by the retry settings.
    const webhookAt = now;
    for (const phone of [PLAIN, ALREADY]) expect((await observe(phone, 'webhook')).result).toBe('ended');
    expect(await decideAt(PLAIN)).toEqual({ state: 'completed', updated_at: webhookAt });
    // A minute later the call list says a person answered: the rules decide now.
    now += 60_000;
    for (const phone of [PLAIN, ALREADY]) expect((await observe(phone, 'poll')).result).toBe('confirmed');
    expect(await decideAt(ALREADY)).toEqual({ state: 'moved', updated_at: now });
    // PLAIN: the retry settings decide again what they decided: the lead is not decided twice.
    expect(await decideAt(PLAIN)).toEqual({ state: 'completed', updated_at: webhookAt });
  });
});
