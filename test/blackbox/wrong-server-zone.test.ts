// A wrong api.server_timezone must never cause a second call. Found black-box: the fake
// writes its zone-less times in Pago Pago (UTC−11) while a daemon left on the default UTC
// reads them 11 hours early; half the make_call answers are lost; every call then looked
// older than its attempt, nothing matched, and unknown attempts were settled as never
// placed and dialled again (one number 5 times in 45 s). With webhooks the call is now
// matched by its length counted back from the delivery's arrival; without them an
// unknown attempt whose call may be in the list is held, never dialled again.
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/store/database.js';
import {
  assertCampaignRulesShowingCalls,
  campaignState,
  daemonEnv,
  makeWorkspace,
  numbers,
  observed,
  SECRETS,
  startDaemon,
  webhookUrl,
  type CampaignSpec,
  type Workspace,
} from '../e2e/daemon-fixture.js';
import { callsByNumber } from '../helpers/invariants.js';
import { runCampaignd, stopAllProcesses } from '../helpers/processes.js';
import { waitUntil } from '../helpers/wait.js';
import { FAKE_DEFAULT_ZONE, recordedFromFake, setFakeWebhook, startFake } from './fake-fixture.js';

let ws: Workspace | undefined;
afterEach(async () => {
  await stopAllProcesses();
  ws?.cleanup();
  ws = undefined;
});

const ZONE_WARNING = /do not read right in api\.server_timezone/;

/** Unknown attempts, and those of them held back from settling because their call may be listed. */
async function unknownAttempts(workspace: Workspace): Promise<{ unknown: number; held: number; pendingLeads: number }> {
  const store = openDatabase(workspace.dbPath, { readonly: true });
  try {
    const rows = await store.db.selectFrom('attempts').select(['detail']).where('state', '=', 'unknown').execute();
    const pending = await store.db.selectFrom('leads').select('id').where('state', 'in', ['pending', 'retry-scheduled']).execute();
    return { unknown: rows.length, held: rows.filter((r) => r.detail?.startsWith('not settled:')).length, pendingLeads: pending.length };
  } finally {
    await store.close();
  }
}

/** The number of one held attempt. */
async function heldNumber(workspace: Workspace): Promise<string> {
  const store = openDatabase(workspace.dbPath, { readonly: true });
  try {
    const row = await store.db.selectFrom('attempts').select('phone_number').where('state', '=', 'unknown').where('detail', 'like', 'not settled:%').executeTakeFirstOrThrow();
    return row.phone_number;
  } finally {
    await store.close();
  }
}

describe('black-box: the service writes its times in another zone than api.server_timezone says', () => {
  it('with webhooks: lost answers are matched by the delivery, the campaign completes, nobody is called twice', async () => {
    const fake = await startFake({ token: SECRETS.token, seed: 31, rateLimit: 'off', outcomes: 'human=0.6,busy=0.4' });
    expect(fake.serverTimezone).toBe(FAKE_DEFAULT_ZONE);
    const spec: CampaignSpec = { name: 'zone', leads: numbers(8).map((n) => [n]), maxParallel: 4, maxRetries: 1, retryInterval: 1 };
    // No serverTimezone: the daemon keeps its default, UTC, eleven hours east of the fake.
    ws = await makeWorkspace({ simUrl: fake.url, campaigns: [spec], assistantId: fake.assistantId });
    const workspace = ws;
    await setFakeWebhook(fake, SECRETS.token, webhookUrl(workspace));
    await fake.setWaves([{ rules: [{ path: '/api/user/make_call', drop_after_create: 0.5 }] }]);
    const daemon = await startDaemon(workspace, daemonEnv());
    await waitUntil(async () => (await campaignState(workspace, 'zone')) === 'completed', {
      timeoutMs: 60_000,
      intervalMs: 200,
      message: () => `campaign zone completed; daemon tail:\n${daemon.stdout().slice(-3000)}`,
    });
    expect(await daemon.stop()).toEqual({ code: 0, signal: null });
    expect((await fake.stats()).injected.drop_after_create).toBeGreaterThan(0);
    await assertCampaignRulesShowingCalls(workspace, [spec], recordedFromFake(await fake.calls()));
    expect(daemon.stdout()).toMatch(ZONE_WARNING);
  }, 120_000);

  it('polling only: an unknown attempt whose call may be listed is held and says why; nobody is dialled again', async () => {
    const fake = await startFake({ token: SECRETS.token, seed: 32, rateLimit: 'off', outcomes: 'human=1' });
    const spec: CampaignSpec = { name: 'zone-poll', leads: numbers(6, 40).map((n) => [n]), maxParallel: 6, maxRetries: 0, retryInterval: 1 };
    ws = await makeWorkspace({ simUrl: fake.url, campaigns: [spec], assistantId: fake.assistantId });
    const workspace = ws;
    await fake.setWaves([{ rules: [{ path: '/api/user/make_call', drop_after_create: 0.5 }] }]);
    const daemon = await startDaemon(workspace, daemonEnv());
    // Every lead dialled, and every lost answer past its settle deadline (5 s) held back.
    await waitUntil(
      async () => {
        const s = await unknownAttempts(workspace);
        return s.pendingLeads === 0 && s.unknown > 0 && s.held === s.unknown;
      },
      { timeoutMs: 60_000, intervalMs: 250, message: async () => `lost answers held, not settled: ${JSON.stringify(await unknownAttempts(workspace))}; daemon tail:\n${daemon.stdout().slice(-3000)}` },
    );
    const calls = recordedFromFake(await fake.calls());
    const perNumber = callsByNumber(observed(calls));
    expect([...perNumber.values()].map((list) => list.length)).toEqual(Array.from({ length: 6 }, () => 1));
    expect(daemon.stdout()).toMatch(ZONE_WARNING);
    expect(daemon.stdout()).not.toMatch(/settled as never placed/);
    // What an operator asking about a held number is told.
    const held = await heldNumber(workspace);
    const explained = await runCampaignd(['explain', held, '--config', workspace.configPath]);
    expect(explained.code).toBe(0);
    expect(explained.stdout).toMatch(/not dialled again: call \S+ to this number could be this attempt's .*set api\.server_timezone/);
    expect(await daemon.stop()).toEqual({ code: 0, signal: null });
  }, 120_000);
});
