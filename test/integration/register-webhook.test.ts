// webhook.register against the simulator over loopback: each assistant the campaigns name
// gets webhook_url = the daemon's address with the secret in the query; the log names the
// address without the secret; an assistant the service does not know is logged, not thrown.
import { afterEach, describe, expect, it } from 'vitest';
import type { LoadedConfig } from '../../src/config/types.js';
import { registerWebhook, webhookBase } from '../../src/lifecycle/register-webhook.js';
import { createServiceClient } from '../../src/service/client.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/server.js';
import { systemClock } from '../../src/time/clock.js';
import { capturingLogger } from './client-fixture.js';
import { campaignConfig } from './status-fixture.js';

const TOKEN = 'tok-register-test';
const SECRET = 'whsec-register-DO-NOT-LOG';
let sim: RunningSimulator | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

function config(assistants: number[], webhook: LoadedConfig['daemon']['webhook'] = { secretEnv: 'S', register: true }): LoadedConfig {
  return {
    daemon: {
      file: '/etc/campaignd/campaignd.yaml',
      api: { baseUrl: sim!.url, rateLimit: { requestsPerMinute: 100, burst: 20, burstWindowSeconds: 10 }, serverTimezone: 'UTC' },
      database: ':memory:',
      campaignsDir: '/etc/campaignd/campaigns',
      http: { host: '127.0.0.1', port: 0 },
      webhook,
      unknownAttemptSettleSeconds: 180,
      log: { level: 'info' },
      ha: { leaseSeconds: 10 },
    },
    campaigns: assistants.map((id, i) => campaignConfig(`c${i}`, { assistantId: id })),
    problems: [],
    brokenCampaigns: [],
  };
}

describe('registerWebhook', () => {
  it("sets each named assistant's webhook_url once, logs it without the secret, and logs an unknown assistant", async () => {
    sim = await startSimulator({ clock: systemClock, tokens: [TOKEN] });
    const client = createServiceClient({ baseUrl: sim.url, getToken: () => TOKEN, clock: systemClock, logger: capturingLogger().logger });
    const { logger, lines } = capturingLogger();
    try {
      const done = await registerWebhook({ client, config: config([1, 1, 999]), boundPort: 9464, secret: SECRET, logger });
      expect(done).toBe(1);
    } finally {
      await client.close();
    }
    const assistant = sim.state.assistants.get(1)!;
    expect(assistant.fields.is_webhook_active).toBe(true);
    expect(assistant.fields.webhook_url).toBe(`http://127.0.0.1:9464/webhooks/post-call?secret=${SECRET}`);
    const log = lines.join('');
    expect(log).toContain('"assistant":1,"webhook_url":"http://127.0.0.1:9464/webhooks/post-call","msg":"post-call webhook registered with the assistant"');
    expect(log).toMatch(/"assistant":999.*could not register the post-call webhook/);
    expect(log).not.toContain(SECRET);
  });

  it("sets every variant's assistant of a campaign with assistant variants", async () => {
    sim = await startSimulator({ clock: systemClock, tokens: [TOKEN] });
    const client = createServiceClient({ baseUrl: sim.url, getToken: () => TOKEN, clock: systemClock, logger: capturingLogger().logger });
    const second = Number((await client.createAssistant({ assistant_name: 'Direct', calls_direction: 'make', engine_type: 'pipeline' } as never)).id);
    const withVariants = config([1]);
    withVariants.campaigns[0]!.variants = [{ name: 'a', assistantId: 1, weight: 1 }, { name: 'b', assistantId: second, weight: 1 }];
    try {
      expect(await registerWebhook({ client, config: withVariants, boundPort: 9464, secret: SECRET, logger: capturingLogger().logger })).toBe(2);
    } finally {
      await client.close();
    }
    for (const id of [1, second]) expect(sim.state.assistants.get(id)!.fields.webhook_url).toBe(`http://127.0.0.1:9464/webhooks/post-call?secret=${SECRET}`);
  });

  it('registers nothing without a secret, and the address is webhook.public_url when set', async () => {
    sim = await startSimulator({ clock: systemClock, tokens: [TOKEN] });
    const { logger, lines } = capturingLogger();
    const calls: number[] = [];
    const done = await registerWebhook({ client: { updateAssistant: async (id) => (calls.push(id), { id, name: '', status: '', type: '', mode: '' }) as never }, config: config([1]), boundPort: 9464, secret: undefined, logger });
    expect(done).toBe(0);
    expect(calls).toEqual([]);
    expect(lines.join('')).toContain('the webhook secret is not set');
    expect(webhookBase(config([1], { secretEnv: 'S', register: true, publicUrl: 'https://campaignd.example' }).daemon, 9464)).toBe('https://campaignd.example');
    expect(webhookBase({ ...config([1]).daemon, http: { host: '::1', port: 0 } }, 9464)).toBe('http://[::1]:9464');
  });
});
