// retry_interval takes seconds: as a whole number (as before) or as a duration with a unit
// (issue 26: `retry_interval: 1h` got "must be a whole number" without naming the unit).
import { describe, expect, it } from 'vitest';
import { parseCampaignFile } from '../../src/config/campaign.js';
import { parseDuration } from '../../src/config/duration.js';

const campaign = (retryInterval: string): ReturnType<typeof parseCampaignFile> =>
  parseCampaignFile('/tmp/x.yaml', `assistant_id: 1\nallowed_days: [mon]\nallowed_hours_start_time: "09:00"\nallowed_hours_end_time: "17:00"\nleads: { remote_campaign_id: 1 }\nretry_interval: ${retryInterval}\n`);

describe('retry_interval', () => {
  it.each([
    ['3600', 3600],
    ['"3600"', 3600],
    ['0', 0],
    ['1h', 3600],
    ['90m', 5400],
    ['3600s', 3600],
    ['1h30m', 5400],
    ['2d', 172_800],
    ['"1H 30M"', 5400],
  ])('%s is %i seconds', (written, seconds) => {
    const { campaign: c, problems } = campaign(written);
    expect(problems).toEqual([]);
    expect(c?.retryIntervalSeconds).toBe(seconds);
  });

  it.each([
    ['1 hour', /"1 hour" is not a duration/],
    ['1.5', /1\.5 is not a whole number of seconds/],
    ['30m1h', /"30m1h" is not a duration/],
    ['true', /must be a duration in seconds, not true/],
    ['400d', /34560000 seconds is out of range/],
    ['-5', /-5 seconds is out of range/],
  ])('%s is refused, naming the unit and the forms it takes', (written, message) => {
    const { campaign: c, problems } = campaign(written);
    expect(c).toBeUndefined();
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ field: 'retry_interval', line: 6, severity: 'error' });
    expect(problems[0]?.message).toMatch(message);
    expect(problems[0]?.hint).toBe('write whole seconds (3600) or a number with a unit: 90s, 15m, 1h, 1h30m, 2d, from 0 to 31536000 seconds');
  });
});

describe('parseDuration', () => {
  it('reads nothing else', () => {
    for (const text of ['', 'h', '1x', '1h1h', '1m1h', '-1h', '1.5h']) expect(parseDuration(text), text).toBeUndefined();
  });
});
