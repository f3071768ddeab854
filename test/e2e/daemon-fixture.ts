// What the daemon end-to-end tests share: a simulator child process with its /__sim/
// controls, a temp folder holding a daemon config and campaign files pointed at it (or at
// the black-box fake service), a daemon child process started on that config, and the
// rule checks of test/helpers/invariants.ts run over the SERVICE's record of calls.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config/load.js';
import { openStore } from '../../src/store/open-store.js';
import type { DatabaseHandle } from '../../src/store/database.js';
import { assertAllRules, type CampaignUnderTest, type ObservedCall } from '../helpers/invariants.js';
import { freePort, spawnCampaignd, waitForHttp, type Proc } from '../helpers/processes.js';

/** A call as the service's own record shows it (simulator GET /__sim/calls, or the fake's GET /calls): the fields the tests read. */
export interface RecordedCall {
  id: number;
  client_phone_number: string;
  status: string;
  answered_by: ObservedCall['answered_by'];
  created_at_ms: number;
  finished_at_ms: number | null;
}

/** A call as GET /__sim/calls shows it. */
export type SimCallJson = RecordedCall;

/** A simulator child process and its test controls. */
export interface SimProcess {
  proc: Proc;
  url: string;
  token: string;
  calls(): Promise<SimCallJson[]>;
  /** POST to a /__sim/ control; throws unless it answers 200. */
  control(name: string, body: unknown): Promise<unknown>;
  /** Points an assistant's post-call webhook at `url`: the first token's assistant 1 unless `of` names another token's. */
  setWebhook(url: string, of?: { assistant: number; token: string }): Promise<void>;
  /** The post-call webhooks the simulator sent and the answers it got (GET /__sim/webhooks). */
  webhooks(): Promise<SimWebhookJson[]>;
}

/** A post-call webhook delivery as GET /__sim/webhooks shows it: the fields the tests read. */
export interface SimWebhookJson {
  callId: number;
  /** The token (0 the first) whose call it reports. */
  userIndex: number;
  /** The receiver's answer; null while in flight or when it failed. */
  status: number | null;
}

/** Short calls with no outcome that rings for half a minute (no-answer) or talks long (voicemail). */
export const QUICK_OUTCOMES = 'human=0.55,busy=0.25,failed=0.2,voicemail=0,no-answer=0';

/** Starts `campaignd simulator --port 0` and waits for its URL line. */
export async function startSimulator(opts: { token: string; seed?: number; outcomes?: string; callDuration?: string; extra?: string[] }): Promise<SimProcess> {
  const args = ['simulator', '--port', '0', '--token', opts.token, '--seed', String(opts.seed ?? 1), '--outcomes', opts.outcomes ?? QUICK_OUTCOMES, '--call-duration', opts.callDuration ?? '1-2', '--log-level', 'warn', ...(opts.extra ?? [])];
  const proc = spawnCampaignd('simulator', args);
  const line = await proc.waitForLine(/^simulator listening on http:\/\//);
  const url = /(http:\/\/[0-9.]+:\d+)/.exec(line)![1]!;
  const control = async (name: string, body: unknown): Promise<unknown> => {
    const res = await fetch(`${url}/__sim/${name}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const json: unknown = await res.json();
    if (res.status !== 200) throw new Error(`/__sim/${name} answered ${res.status}: ${JSON.stringify(json)}`);
    return json;
  };
  return {
    proc,
    url,
    token: opts.token,
    control,
    calls: async () => ((await (await fetch(`${url}/__sim/calls`)).json()) as { calls: SimCallJson[] }).calls,
    webhooks: async () => ((await (await fetch(`${url}/__sim/webhooks`)).json()) as { deliveries: SimWebhookJson[] }).deliveries,
    setWebhook: async (webhookUrl, of = { assistant: 1, token: opts.token }) => {
      const res = await fetch(`${url}/api/user/assistant/${of.assistant}`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${of.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ is_webhook_active: true, webhook_url: webhookUrl }),
      });
      if (res.status !== 200) throw new Error(`setting the webhook answered ${res.status}: ${await res.text()}`);
    },
  };
}

/** A campaign file the tests write: leads are lists of contacts, primary first. */
export interface CampaignSpec {
  name: string;
  leads: string[][];
  maxParallel: number;
  maxRetries: number;
  retryInterval: number;
  status?: 'running' | 'paused';
}

/** A temp folder with campaignd.yaml, campaigns/ and data/. */
export interface Workspace {
  dir: string;
  configPath: string;
  dbPath: string;
  httpPort: number;
  httpUrl: string;
  tokenFile: string | null;
  /** A PostgreSQL database the daemons use instead of dbPath (with its test password). */
  databaseUrl?: string;
  writeCampaign(spec: CampaignSpec): void;
  cleanup(): void;
}

/** `count` distinct +1 555 numbers starting at `from`; possible (not assigned) numbers pass the lead check. */
export function numbers(count: number, from = 0): string[] {
  return Array.from({ length: count }, (_, i) => `+1555${String(2_000_000 + from + i).padStart(7, '0')}`);
}

/** Writes a daemon config pointed at `simUrl`, listening on a fixed free port, and the campaigns. */
export async function makeWorkspace(opts: {
  /** The service's base URL: the simulator's, or the black-box fake's. */
  simUrl: string;
  campaigns: CampaignSpec[];
  settleSeconds?: number;
  tokenInFile?: string;
  rateLimit?: { perMinute: number; burst: number };
  /** api.server_timezone: the zone of the service's zone-less timestamps (default UTC). */
  serverTimezone?: string;
  /** The outbound assistant the campaigns name (default 1, the simulator's). */
  assistantId?: number;
}): Promise<Workspace> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'campaignd-e2e-'));
  fs.mkdirSync(path.join(dir, 'campaigns'));
  fs.mkdirSync(path.join(dir, 'leads'));
  const httpPort = await freePort();
  const tokenFile = opts.tokenInFile === undefined ? null : path.join(dir, 'token');
  if (tokenFile) fs.writeFileSync(tokenFile, `${opts.tokenInFile}\n`, { mode: 0o600 });
  const yaml = [
    'api:',
    `  base_url: ${opts.simUrl}`,
    ...(tokenFile ? [`  token_file: ${tokenFile}`] : []),
    `  rate_limit: { requests_per_minute: ${opts.rateLimit?.perMinute ?? 600}, burst: ${opts.rateLimit?.burst ?? 30} }`,
    ...(opts.serverTimezone ? [`  server_timezone: ${opts.serverTimezone}`] : []),
    'database: ./data/campaignd.db',
    'campaigns_dir: ./campaigns',
    'http:',
    `  listen: 127.0.0.1:${httpPort}`,
    `unknown_attempt_settle_seconds: ${opts.settleSeconds ?? 5}`,
    'log:',
    '  level: info',
    '',
  ].join('\n');
  const configPath = path.join(dir, 'campaignd.yaml');
  fs.writeFileSync(configPath, yaml);
  const writeCampaign = (c: CampaignSpec): void => {
    const width = Math.max(1, ...c.leads.map((l) => l.length));
    const header = ['phone_number', 'first_name', ...Array.from({ length: width - 1 }, (_, i) => `secondary_phone_number_${i + 1}`)];
    const rows = c.leads.map((l, i) => [l[0]!, `Lead${i}`, ...Array.from({ length: width - 1 }, (_, k) => l[k + 1] ?? '')].join(','));
    fs.writeFileSync(path.join(dir, 'leads', `${c.name}.csv`), `${[header.join(','), ...rows].join('\n')}\n`);
    const file = {
      name: c.name,
      assistant_id: opts.assistantId ?? 1,
      timezone: 'UTC',
      allowed_days: ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'],
      allowed_hours_start_time: '00:00:00',
      allowed_hours_end_time: '00:00:00',
      max_calls_in_parallel: c.maxParallel,
      max_retries: c.maxRetries,
      retry_interval: c.retryInterval,
      mark_complete_when_no_leads: true,
      retry_on: ['busy', 'no-answer', 'failed'],
      status: c.status ?? 'running',
      default_country: 'US',
      leads: { file: `../leads/${c.name}.csv` },
    };
    // JSON is YAML: one writer for every campaign file.
    fs.writeFileSync(path.join(dir, 'campaigns', `${c.name}.yaml`), `${JSON.stringify(file, null, 2)}\n`);
  };
  for (const c of opts.campaigns) writeCampaign(c);
  return {
    dir,
    configPath,
    dbPath: path.join(dir, 'data', 'campaignd.db'),
    httpPort,
    httpUrl: `http://127.0.0.1:${httpPort}`,
    tokenFile,
    writeCampaign,
    cleanup: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}

/** Distinctive secrets, so a leak is found by a plain substring search. */
export const SECRETS = { token: 'tok-E2E-7c1d9f0b-DO-NOT-LOG', webhook: 'whsec-E2E-4a8e22c1-DO-NOT-LOG' };

/** Starts `campaignd run` on the workspace and waits for "campaignd running" and /healthz. */
export async function startDaemon(ws: Workspace, env: Record<string, string>, name = 'daemon'): Promise<Proc> {
  const proc = spawnCampaignd(name, ['run', '--config', ws.configPath], { env });
  await proc.waitForLine(/"msg":"campaignd running"/, 30_000);
  await waitForHttp(`${ws.httpUrl}/healthz`);
  return proc;
}

/** The environment of a daemon with the test token (unless in a file) and webhook secret. */
export function daemonEnv(token: string | null = SECRETS.token): Record<string, string> {
  return { CAMPAIGND_WEBHOOK_SECRET: SECRETS.webhook, ...(token === null ? {} : { CAMPAIGND_API_TOKEN: token }) };
}

/** The webhook URL the simulator calls (the secret in the query, as the service allows). */
export function webhookUrl(ws: Workspace): string {
  return `${ws.httpUrl}/webhooks/post-call?secret=${SECRETS.webhook}`;
}

/** Recorded calls in the shape the invariant checks read. */
export function observed(calls: readonly RecordedCall[]): ObservedCall[] {
  return calls.map((c) => ({ id: c.id, client_phone_number: c.client_phone_number, status: c.status, answered_by: c.answered_by, createdAt: c.created_at_ms, finishedAt: c.finished_at_ms }));
}

/** The workspace's store, read-only: its SQLite file, or its PostgreSQL database. */
function openWorkspaceStore(ws: Workspace): Promise<DatabaseHandle> {
  return openStore(ws.databaseUrl ?? ws.dbPath, { readonly: true });
}

/** One read of the workspace's store (read-only, while the daemon runs), closed after it. */
export async function readWorkspace<T>(ws: Workspace, read: (db: DatabaseHandle['db']) => Promise<T>): Promise<T> {
  const store = await openWorkspaceStore(ws);
  try {
    return await read(store.db);
  } finally {
    await store.close();
  }
}

/** The state of a campaign straight from the database (read-only, while the daemon runs). */
export async function campaignState(ws: Workspace, name: string): Promise<string | null> {
  if (!ws.databaseUrl && !fs.existsSync(ws.dbPath)) return null;
  const store = await openWorkspaceStore(ws);
  try {
    const row = await store.db.selectFrom('campaigns').select('state').where('name', '=', name).executeTakeFirst();
    return row?.state ?? null;
  } finally {
    await store.close();
  }
}

/**
 * Ended attempts whose success came from a post-call webhook, which carries no
 * answered_by: the daemon confirms them from the call list later (a voicemail is then
 * decided again), so lead states are not final until none is left.
 */
export async function unconfirmedSuccesses(ws: Workspace): Promise<number> {
  if (!ws.databaseUrl && !fs.existsSync(ws.dbPath)) return 0;
  const store = await openWorkspaceStore(ws);
  try {
    const rows = await store.db.selectFrom('attempts').select('id').where('state', '=', 'ended').where('outcome', '=', 'success').where('outcome_source', '=', 'webhook').execute();
    return rows.length;
  } finally {
    await store.close();
  }
}

/**
 * Every rule of docs/design.md §3 over the service's record of calls, with the
 * final lead states and status counts from the database (the daemon must be stopped).
 */
export async function assertCampaignRules(ws: Workspace, specs: readonly CampaignSpec[], calls: readonly RecordedCall[]): Promise<void> {
  const loaded = await loadConfig(ws.configPath, {}, { cwd: ws.dir });
  const store = await openWorkspaceStore(ws);
  try {
    const rows = await store.db.selectFrom('campaigns').select(['id', 'name']).execute();
    const under: CampaignUnderTest[] = specs.map((s) => {
      const config = loaded.campaigns.find((c) => c.name === s.name);
      const row = rows.find((r) => r.name === s.name);
      if (!config || !row) throw new Error(`campaign ${s.name} missing from the config or the database`);
      return { id: row.id, name: s.name, config, leads: s.leads.map((contacts) => ({ contacts })) };
    });
    await assertAllRules(store.db, observed(calls), under, { now: Date.now() });
  } finally {
    await store.close();
  }
}

/**
 * assertCampaignRules, and on failure the error also shows the service's calls to every
 * number the message names, so a report carries its evidence.
 */
export async function assertCampaignRulesShowingCalls(ws: Workspace, specs: readonly CampaignSpec[], calls: readonly RecordedCall[]): Promise<void> {
  try {
    await assertCampaignRules(ws, specs, calls);
  } catch (err) {
    if (!(err instanceof Error)) throw err;
    const named = new Set(err.message.match(/\+\d{8,15}/g) ?? []);
    const lines = calls
      .filter((c) => named.has(c.client_phone_number))
      .sort((a, b) => a.created_at_ms - b.created_at_ms)
      .map((c) => `  call ${c.id} to ${c.client_phone_number}: ${c.status} answered_by=${c.answered_by} created ${new Date(c.created_at_ms).toISOString()} finished ${c.finished_at_ms === null ? 'never' : new Date(c.finished_at_ms).toISOString()}`);
    err.message = `${err.message}\nthe service's calls to the numbers named:\n${lines.join('\n') || '  none'}`;
    throw err;
  }
}

/** Fails when a secret appears in any text (logs, command output). */
export function assertNoSecrets(texts: readonly string[], where: string): void {
  for (const [label, secret] of Object.entries(SECRETS)) {
    for (const t of texts) {
      if (t.includes(secret)) throw new Error(`the ${label} secret appears in ${where}: …${t.slice(Math.max(0, t.indexOf(secret) - 200), t.indexOf(secret) + 50)}…`);
    }
  }
}

/** The first outbound assistant a token sees in the simulator (each token has its own). */
export async function assistantOf(url: string, token: string): Promise<number> {
  const res = await fetch(`${url}/api/user/assistants/outbound`, { headers: { authorization: `Bearer ${token}`, accept: 'application/json' } });
  const body = (await res.json()) as { data?: { id: number }[] } | { id: number }[];
  const list = Array.isArray(body) ? body : (body.data ?? []);
  return Number(list[0]!.id);
}
