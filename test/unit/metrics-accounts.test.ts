// The account gauges (README, "Many accounts") are read from the daemon at each scrape: an
// account taken over or refused shows at once, not at the next heartbeat.
import { describe, expect, it } from 'vitest';
import { createMetrics, type AccountGauges } from '../../src/http/metrics.js';

describe('metrics: campaignd_account_dialing and campaignd_account_api_ok', () => {
  it('shows each account as the source says at the scrape, and drops an account no longer listed', async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    expect(await metrics.registry.metrics()).not.toMatch(/^campaignd_account_dialing\{/m);
    let now: AccountGauges[] = [
      { account: 'acme', dialing: true, apiOk: true },
      { account: 'globex', dialing: false, apiOk: false },
    ];
    metrics.watchAccounts(() => now);
    let text = await metrics.registry.metrics();
    expect(text).toMatch(/^campaignd_account_dialing\{account="acme"\} 1$/m);
    expect(text).toMatch(/^campaignd_account_dialing\{account="globex"\} 0$/m);
    expect(text).toMatch(/^campaignd_account_api_ok\{account="acme"\} 1$/m);
    expect(text).toMatch(/^campaignd_account_api_ok\{account="globex"\} 0$/m);

    now = [{ account: 'globex', dialing: true, apiOk: true }];
    text = await metrics.registry.metrics();
    expect(text).toMatch(/^campaignd_account_dialing\{account="globex"\} 1$/m);
    expect(text).not.toMatch(/account="acme"/);
  });
});
