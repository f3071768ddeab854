// Who may be called (docs/design.md §11) in the config: calling_rules and max_attempts_per_number of the daemon file
// and of campaign files end up in each campaign's callingPolicy; a broken rules file
// named by a campaign stops that campaign only, with the rules file's line in the message.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { daemonConfigHasErrors, loadConfig } from '../../src/config/load.js';

const CAMPAIGN = 'assistant_id: 1\ntimezone: UTC\nallowed_days: [mon]\nallowed_hours_start_time: "09:00"\nallowed_hours_end_time: "17:00"\nleads: { remote_campaign_id: 3 }\n';

describe('calling policy from the config files', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it('folds the daemon rules and cap into every campaign, adds a campaign’s own, and reports a broken rules file on its campaign', async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'campaignd-rules-'));
    fs.mkdirSync(path.join(dir, 'campaigns'));
    fs.writeFileSync(path.join(dir, 'all.yaml'), 'rules:\n  - region: US\n    hours: { start: "08:00", end: "21:00" }\n');
    fs.writeFileSync(path.join(dir, 'tx.yaml'), 'rules:\n  - region: US-TX\n    no_calls_on: [sunday]\n');
    fs.writeFileSync(path.join(dir, 'broken.yaml'), 'rules:\n  - region: US-FL\n    hours: { start: "20:00", end: "08:00" }\n');
    fs.writeFileSync(path.join(dir, 'campaignd.yaml'), 'api:\n  base_url: http://127.0.0.1:9\ncampaigns_dir: ./campaigns\ncalling_rules: ./all.yaml\nmax_attempts_per_number: { count: 3, window_hours: 24 }\n');
    fs.writeFileSync(path.join(dir, 'campaigns', 'a.yaml'), `${CAMPAIGN}calling_rules: ../tx.yaml\nmax_attempts_per_number: { count: 1, window_hours: 2 }\nopt_out: { variable: do_not_call, values: [yes, "STOP"] }\n`);
    fs.writeFileSync(path.join(dir, 'campaigns', 'b.yaml'), CAMPAIGN);
    fs.writeFileSync(path.join(dir, 'campaigns', 'c.yaml'), `${CAMPAIGN}calling_rules: ../broken.yaml\n`);
    const loaded = await loadConfig(path.join(dir, 'campaignd.yaml'), {});
    const a = loaded.campaigns.find((c) => c.name === 'a')!;
    const b = loaded.campaigns.find((c) => c.name === 'b')!;
    expect(a.callingPolicy?.rules.map((r) => r.region)).toEqual(['US', 'US-TX']);
    expect(a.callingPolicy?.caps.map((c) => `${c.count}/${c.windowHours} ${c.origin}`)).toEqual(['3/24 daemon max_attempts_per_number', '1/2 campaign max_attempts_per_number']);
    expect(a.optOut).toEqual({ variable: 'do_not_call', values: ['yes', 'STOP'] });
    expect(b.callingPolicy?.rules.map((r) => r.region)).toEqual(['US']);
    expect(b.callingPolicy?.caps).toHaveLength(1);
    // c is broken by its rules file, and only c: the daemon still starts.
    expect(loaded.brokenCampaigns.map((x) => x.name)).toEqual(['c']);
    const problem = loaded.problems.find((p) => p.file === path.join(dir!, 'campaigns', 'c.yaml'))!;
    expect(problem).toMatchObject({ field: 'calling_rules', line: 7, severity: 'error' });
    expect(problem.message).toBe(`${path.join(dir, 'broken.yaml')}:3 (rules[0].hours.end): must be later than start (rules never run past midnight)`);
    expect(daemonConfigHasErrors(loaded)).toBe(false);
  });
});
