// The service a daemon scenario runs against: campaignd's own simulator, or the
// independent black-box fake (test/blackbox/fake-service.mjs). The crash and fault
// scenarios are written once over this interface; each service records its own calls
// and the rule checks judge that record, never the daemon's database alone.
import { recordedFromFake, setFakeWebhook, startFake, type FakeFaultRule, type FakeWave } from '../blackbox/fake-fixture.js';
import type { Proc } from '../helpers/processes.js';
import { SECRETS, startSimulator, type RecordedCall } from './daemon-fixture.js';

export type ServiceKind = 'simulator' | 'fake';

/** One fault rule in words both services understand (shares in [0, 1]). */
export interface FaultRule {
  /** Only requests to this path (default: every /api/user request). */
  path?: string;
  latencyMs?: number;
  serverError?: number;
  serverStatus?: number;
  /** 5xx bodies are a proxy's HTML page (fake only). */
  html?: boolean;
  /** 429s, naming `retryAfter` seconds in a header, in the body, or both. */
  rateLimited?: number;
  retryAfter?: number;
  retryAfterIn?: 'header' | 'body' | 'both';
  /** Connections reset before the service did anything (no call created). */
  resetBeforeCreate?: number;
  /** make_call connections reset after the call was created. */
  dropAfterCreate?: number;
}

/** Rules that hold for `durationMs` (forever without), then the next wave's, cycling. */
export interface FaultWave {
  durationMs?: number;
  rules: FaultRule[];
}

export interface ServiceUnderTest {
  kind: ServiceKind;
  url: string;
  proc: Proc;
  /** What the daemon's api.server_timezone must say to read this service's timestamps. */
  serverTimezone: string;
  /** The outbound assistant campaigns name. */
  assistantId: number;
  /** The service's own record of every call it created. */
  calls(): Promise<RecordedCall[]>;
  /** Points the assistant's post-call webhook at `url` (through the API, before any fault). */
  setWebhook(url: string): Promise<void>;
  setFaults(waves: FaultWave[]): Promise<void>;
  clearFaults(): Promise<void>;
  /** 429s the service's OWN rate limiter sent (not injected ones); null if it does not say. */
  limiterRefusals(): Promise<number | null>;
  /** 429s sent as injected faults; null if the service does not say. */
  injected429s(): Promise<number | null>;
  /** The service's own counters, when it keeps them (for failure messages). */
  stats(): Promise<unknown>;
}

export interface ServiceOptions {
  seed: number;
  /** Emulate the live limit (100/min, 20 per 10 s). */
  rateLimit?: boolean;
  /**
   * Answering machines pick up some calls (default false). Their webhook says success;
   * only the call list's answered_by shows the voicemail, so the daemon's lead states
   * settle only after its next poll (see unconfirmedSuccesses).
   */
  voicemail?: boolean;
  /** make_call answers name the call (`call_id`; the fake sends it as a string). */
  callIdInAnswer?: boolean;
  /** The fake caps `per_page` of the call list at this (default 100), so listings span pages. */
  maxPerPage?: number;
}

/** The fake's outcome shares without and with answering machines. */
const FAKE_OUTCOMES = { quick: 'human=0.5,busy=0.25,no-answer=0.1,failed=0.15', voicemail: 'human=0.4,machine=0.2,busy=0.2,no-answer=0.1,failed=0.1' };

/** Starts the service of `kind` with the test token of daemon-fixture's SECRETS. */
export async function startService(kind: ServiceKind, opts: ServiceOptions): Promise<ServiceUnderTest> {
  return kind === 'simulator' ? startSimulatorService(opts) : startFakeService(opts);
}

async function startSimulatorService(opts: ServiceOptions): Promise<ServiceUnderTest> {
  // QUICK_OUTCOMES has no voicemail: the simulator's voicemails talk for minutes.
  if (opts.voicemail) throw new Error('the simulator profile of these scenarios has no voicemail outcome');
  if (opts.maxPerPage) throw new Error('the simulator serves per_page as asked');
  const extra = [...(opts.rateLimit ? ['--rate-limit', '100/min'] : []), ...(opts.callIdInAnswer ? ['--call-id'] : [])];
  const sim = await startSimulator({ token: SECRETS.token, seed: opts.seed, extra });
  return {
    kind: 'simulator',
    url: sim.url,
    proc: sim.proc,
    serverTimezone: 'UTC',
    assistantId: 1,
    calls: () => sim.calls(),
    setWebhook: (url) => sim.setWebhook(url),
    async setFaults(waves) {
      if (waves.length !== 1 || waves[0]!.durationMs !== undefined) throw new Error('the simulator holds one fault set at a time: no timed waves');
      for (const r of waves[0]!.rules) await sim.control('faults', simulatorFault(r));
    },
    async clearFaults() {
      const res = await fetch(`${sim.url}/__sim/reset-faults`, { method: 'POST' });
      if (res.status !== 200) throw new Error(`/__sim/reset-faults answered ${res.status}`);
    },
    limiterRefusals: async () => null,
    injected429s: async () => null,
    stats: async () => null,
  };
}

function simulatorFault(r: FaultRule): Record<string, unknown> {
  if (r.resetBeforeCreate) throw new Error('the simulator cannot reset connections before creating the call');
  if (r.html) throw new Error('the simulator answers 5xx with JSON only');
  if (r.rateLimited && r.retryAfterIn !== undefined && r.retryAfterIn !== 'both') throw new Error('the simulator names retry_after in the header and the body together');
  return {
    ...(r.path ? { path: r.path } : {}),
    ...(r.latencyMs ? { latency_ms: r.latencyMs } : {}),
    ...(r.serverError ? { server_error: r.serverError, server_status: r.serverStatus ?? 500 } : {}),
    ...(r.rateLimited ? { rate_limited: r.rateLimited, retry_after: r.retryAfter ?? 1 } : {}),
    ...(r.dropAfterCreate ? { drop_after_create: r.dropAfterCreate } : {}),
  };
}

async function startFakeService(opts: ServiceOptions): Promise<ServiceUnderTest> {
  const fake = await startFake({
    token: SECRETS.token,
    seed: opts.seed,
    rateLimit: opts.rateLimit ? '100/min' : 'off',
    outcomes: FAKE_OUTCOMES[opts.voicemail ? 'voicemail' : 'quick'],
    callId: opts.callIdInAnswer ?? false,
    ...(opts.maxPerPage ? { maxPerPage: opts.maxPerPage } : {}),
  });
  return {
    kind: 'fake',
    url: fake.url,
    proc: fake.proc,
    serverTimezone: fake.serverTimezone,
    assistantId: fake.assistantId,
    calls: async () => recordedFromFake(await fake.calls()),
    setWebhook: (url) => setFakeWebhook(fake, SECRETS.token, url),
    setFaults: (waves) => fake.setWaves(waves.map(fakeWave)),
    clearFaults: () => fake.clearFaults(),
    limiterRefusals: async () => (await fake.stats()).rate_limited,
    injected429s: async () => {
      const { injected } = await fake.stats();
      return injected.rate_limited_header + injected.rate_limited_body;
    },
    stats: () => fake.stats(),
  };
}

function fakeWave(w: FaultWave): FakeWave {
  return { ...(w.durationMs ? { duration_ms: w.durationMs } : {}), rules: w.rules.map(fakeRule) };
}

function fakeRule(r: FaultRule): FakeFaultRule {
  if (r.rateLimited && r.retryAfterIn === 'both') throw new Error('the fake names retry_after in the header OR the body, never both');
  const in429 = r.retryAfterIn ?? 'header';
  return {
    ...(r.path ? { path: r.path } : {}),
    ...(r.latencyMs ? { latency_ms: r.latencyMs } : {}),
    ...(r.serverError ? { server_error: r.serverError, server_status: r.serverStatus ?? 500, ...(r.html ? { html: true } : {}) } : {}),
    ...(r.rateLimited ? { [in429 === 'header' ? 'rate_limited_header' : 'rate_limited_body']: r.rateLimited, retry_after: r.retryAfter ?? 1 } : {}),
    ...(r.resetBeforeCreate ? { reset: r.resetBeforeCreate } : {}),
    ...(r.dropAfterCreate ? { drop_after_create: r.dropAfterCreate } : {}),
  };
}
