import type { CampaignConfig } from '../../src/config/types.js';

/**
 * A campaign file as the tests mean it unless they say otherwise: every day, all day, UTC,
 * 3 calls at once, 2 retries a minute apart on every retryable outcome, running.
 */
export function testCampaignConfig(name: string, overrides: Partial<Omit<CampaignConfig, 'name'>> = {}): CampaignConfig {
  return {
    name,
    file: `/test/campaigns/${name}.yaml`,
    assistantId: 1,
    timezone: 'UTC',
    allowedDays: [1, 2, 3, 4, 5, 6, 7],
    allowedHoursStart: 0,
    allowedHoursEnd: 0,
    maxCallsInParallel: 3,
    maxRetries: 2,
    retryIntervalSeconds: 60,
    markCompleteWhenNoLeads: true,
    retryOn: ['busy', 'no-answer', 'failed', 'voicemail'],
    blackoutDates: [],
    initialStatus: 'running',
    leads: {},
    allowDuplicates: false,
    ...overrides,
  };
}
