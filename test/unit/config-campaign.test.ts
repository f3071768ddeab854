import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseCampaignFile } from '../../src/config/campaign.js';
import type { ConfigProblem } from '../../src/config/types.js';

const dir = path.resolve(import.meta.dirname, '../fixtures/config/campaigns');

function parse(name: string): ReturnType<typeof parseCampaignFile> {
  const file = path.join(dir, name);
  return parseCampaignFile(file, readFileSync(file, 'utf8'));
}

function at(problems: ConfigProblem[], field: string): ConfigProblem {
  const found = problems.find((p) => p.field === field);
  if (!found) throw new Error(`no problem for ${field}; got ${problems.map((p) => p.field).join(', ')}`);
  return found;
}

describe('parseCampaignFile: a good file', () => {
  it('normalises every field: days to weekday numbers, times to seconds, paths against the file folder', () => {
    const { campaign, problems } = parse('good.yaml');
    expect(problems).toEqual([]);
    expect(campaign).toEqual({
      name: 'spring-renewals',
      file: path.join(dir, 'good.yaml'),
      assistantId: 12,
      timezone: 'Europe/Berlin',
      allowedDays: [1, 2, 3, 4, 5],
      allowedHoursStart: 9 * 3600,
      allowedHoursEnd: 18 * 3600,
      maxCallsInParallel: 5,
      maxRetries: 2,
      retryIntervalSeconds: 3600,
      markCompleteWhenNoLeads: true,
      retryOn: ['busy', 'no-answer', 'failed', 'voicemail'],
      blackoutDates: ['2026-12-24', '2026-12-25'],
      leadLocalHours: { start: 8 * 3600, end: 21 * 3600 },
      initialStatus: 'paused',
      leads: { file: path.join(dir, 'leads/spring.csv') },
      defaultCountry: 'DE',
      allowDuplicates: true,
    });
  });

  it('fills the documented defaults and takes the name from the file', () => {
    const { campaign, problems } = parse('minimal.yaml');
    expect(problems).toEqual([]);
    expect(campaign).toMatchObject({
      name: 'minimal',
      allowedDays: [6, 7],
      allowedHoursStart: 22 * 3600,
      allowedHoursEnd: 6 * 3600 + 30 * 60,
      maxCallsInParallel: 3,
      maxRetries: 3,
      retryIntervalSeconds: 60,
      markCompleteWhenNoLeads: true,
      retryOn: ['busy', 'no-answer', 'failed', 'voicemail'],
      blackoutDates: [],
      initialStatus: 'running',
      leads: { remoteCampaignId: 17 },
      allowDuplicates: false,
    });
    expect(campaign?.timezone).toBeUndefined();
    expect(campaign?.leadLocalHours).toBeUndefined();
    expect(campaign?.defaultCountry).toBeUndefined();
  });

  it('accepts day abbreviations and any case', () => {
    const text = 'assistant_id: 1\nallowed_days: [Mon, FRIDAY, sun]\nallowed_hours_start_time: "9:00"\nallowed_hours_end_time: "17:00:30"\nleads: { remote_campaign_id: 1 }\n';
    const { campaign } = parseCampaignFile('/tmp/x.yaml', text);
    expect(campaign?.allowedDays).toEqual([1, 5, 7]);
    expect(campaign?.allowedHoursStart).toBe(9 * 3600);
    expect(campaign?.allowedHoursEnd).toBe(17 * 3600 + 30);
  });
});

describe('parseCampaignFile: every problem of a file at once, with line and field', () => {
  const { campaign, problems } = parse('many-problems.yaml');
  const expected: [field: string, line: number, text: RegExp][] = [
    ['name', 1, /not a valid campaign name/],
    ['assistant_id', 2, /-4 is out of range/],
    ['timezone', 3, /not an IANA time zone \(did you mean "Europe\/Berlin"\?\)/],
    ['allowed_days[1]', 4, /"funday" is not a day name \(did you mean "sunday"\?\)/],
    ['allowed_hours_start_time', 5, /"25:00" is not a time of day/],
    ['allowed_hours_end_time', 6, /must be a quoted time/],
    ['max_calls_in_parallel', 7, /0 is out of range/],
    ['max_retries', 8, /21 is out of range/],
    ['retry_interval', 9, /1.5 is not a whole number/],
    ['mark_complete_when_no_leads', 10, /must be true or false/],
    ['retry_on[1]', 11, /"hangup" is not a retryable outcome/],
    ['blackout_dates[0]', 12, /"2026-02-30" is not a real date/],
    ['blackout_dates[2]', 12, /"24.12.2026" is not a real date/],
    ['lead_local_hours.end', 13, /"9pm" is not a time of day/],
    ['status', 14, /"stopped" is not a campaign status/],
    ['default_country', 15, /not a two-letter country code/],
    ['allow_duplicates', 16, /must be true or false/],
    ['leads', 17, /sets both file and remote_campaign_id/],
  ];

  it('yields no campaign', () => {
    expect(campaign).toBeUndefined();
  });

  it.each(expected)('%s on line %i', (field, line, text) => {
    const p = at(problems, field);
    expect(p.line).toBe(line);
    expect(p.message).toMatch(text);
    expect(p.severity).toBe('error');
    expect(p.hint).toBeTruthy();
    expect(p.file).toBe(path.join(dir, 'many-problems.yaml'));
  });

  it('reports nothing else, in line order', () => {
    expect(problems.map((p) => p.field)).toEqual(expected.map(([f]) => f));
  });

  it('keeps the good blackout date out of the problems', () => {
    expect(problems.some((p) => p.field === 'blackout_dates[1]')).toBe(false);
  });
});

describe('parseCampaignFile: unknown keys', () => {
  const { problems } = parse('unknown-keys.yaml');

  it('names each unknown key at its own line with a did-you-mean', () => {
    expect(at(problems, 'alowed_days')).toMatchObject({ line: 2, column: 1, message: 'unknown field "alowed_days" (did you mean "allowed_days"?)' });
    expect(at(problems, 'max_retry')).toMatchObject({ line: 5, message: expect.stringContaining('did you mean "max_retries"') });
    expect(at(problems, 'leads.fiel')).toMatchObject({ line: 8, column: 3 });
  });

  it('lists the known fields when nothing is close', () => {
    const p = at(problems, 'colour');
    expect(p.line).toBe(9);
    expect(p.message).not.toContain('did you mean');
    expect(p.hint).toContain('allowed_hours_start_time');
  });

  it('does not also call the misspelt required field missing', () => {
    expect(problems.filter((p) => p.field === 'allowed_days')).toEqual([]);
    expect(problems).toHaveLength(4);
  });
});

describe('parseCampaignFile: syntax and shape', () => {
  it('reports a YAML syntax error with its line', () => {
    const { campaign, problems } = parse('syntax-error.yaml');
    expect(campaign).toBeUndefined();
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ line: 3, severity: 'error', message: expect.stringContaining('Flow sequence') });
  });

  it('reports a duplicated key at its second occurrence', () => {
    const { problems } = parse('duplicate-key.yaml');
    expect(problems[0]).toMatchObject({ line: 5, message: expect.stringContaining('unique') });
  });

  it('reports a JSON syntax error with its line', () => {
    const { problems } = parse('bad-json.json');
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ line: 4, message: expect.stringMatching(/^invalid JSON/) });
  });

  it('checks JSON files like YAML ones, with exact lines, and allows $schema', () => {
    const { problems } = parse('problems.json');
    expect(problems.map((p) => [p.field, p.line])).toEqual([
      ['allowed_days[1]', 4],
      ['retry_intervall', 7],
    ]);
    expect(problems[1]?.message).toContain('did you mean "retry_interval"');
  });

  it('reports an empty file and a file that is not a mapping', () => {
    expect(parse('empty.yaml').problems[0]?.message).toBe('the file is empty');
    expect(parse('not-a-mapping.yaml').problems[0]?.message).toMatch(/must be a mapping/);
  });

  it('reports lists and mappings written as scalars', () => {
    const { problems } = parse('wrong-shapes.yaml');
    expect(problems.map((p) => [p.field, p.line])).toEqual([
      ['allowed_days', 2],
      ['retry_on', 5],
      ['lead_local_hours', 6],
      ['leads', 7],
    ]);
  });

  it('reports every missing required field and a leads mapping without a source', () => {
    const { problems } = parse('missing-fields.yaml');
    // Which assistant field to give comes first: it is what a person fixes first.
    expect(problems.map((p) => p.field)).toEqual(['assistant_id', 'allowed_days', 'allowed_hours_start_time', 'allowed_hours_end_time', 'leads']);
    expect(problems[0]).toMatchObject({ message: 'needs one of assistant_id or assistants', hint: 'give exactly one of assistant_id, assistants' });
    expect(problems[4]).toMatchObject({ line: 2, message: 'needs one of file or remote_campaign_id' });
  });

  it('rejects quoted numbers, an empty allowed_days and second 60', () => {
    const { problems } = parse('empty-days.yaml');
    expect(problems.map((p) => [p.field, p.line])).toEqual([
      ['assistant_id', 1],
      ['allowed_days', 2],
      ['allowed_hours_end_time', 4],
      ['leads.remote_campaign_id', 6],
    ]);
    expect(problems[0]?.hint).toBe('remove the quotes');
  });

  it('refuses "." and ".." as names: an HTTP client removes them from the API paths', () => {
    const file = (name: string) => `name: "${name}"\nassistant_id: 1\nallowed_days: [mon]\nallowed_hours_start_time: "9:00"\nallowed_hours_end_time: "17:00"\nleads: { remote_campaign_id: 1 }\n`;
    for (const name of ['.', '..']) {
      const { campaign, problems } = parseCampaignFile('/tmp/x.yaml', file(name));
      expect(campaign).toBeUndefined();
      expect(at(problems, 'name').hint).toMatch(/not "\." or "\.\." alone/);
    }
    expect(parseCampaignFile('/tmp/x.yaml', file('...x')).campaign?.name).toBe('...x');
  });

  it('rejects a file name that cannot be a campaign name when no name is set', () => {
    const { problems } = parse('bad name!.yaml');
    expect(problems).toHaveLength(1);
    expect(problems[0]?.message).toContain('"bad name!"');
  });
});

describe('parseCampaignFile: legal but suspicious', () => {
  it('warns (without failing) when lead_local_hours restricts nothing and a day repeats', () => {
    const text = 'assistant_id: 1\nallowed_days: [monday, mon]\nallowed_hours_start_time: "09:00"\nallowed_hours_end_time: "17:00"\nlead_local_hours: { start: "08:00", end: "08:00" }\nleads: { remote_campaign_id: 1 }\n';
    const { campaign, problems } = parseCampaignFile('/tmp/w.yaml', text);
    expect(campaign?.allowedDays).toEqual([1]);
    expect(problems.map((p) => [p.field, p.severity, p.line])).toEqual([
      ['allowed_days', 'warning', 2],
      ['lead_local_hours', 'warning', 5],
    ]);
  });
});

describe('parseCampaignFile: retry_on and max_retries', () => {
  const base = 'assistant_id: 1\nallowed_days: [monday]\nallowed_hours_start_time: "09:00"\nallowed_hours_end_time: "17:00"\nleads: { remote_campaign_id: 1 }\n';

  it('an empty retry_on is allowed and retries nothing', () => {
    const { campaign, problems } = parseCampaignFile('/tmp/r.yaml', `${base}retry_on: []\n`);
    expect(problems).toEqual([]);
    expect(campaign?.retryOn).toEqual([]);
  });

  it('warns when max_retries is written but retry_on is empty', () => {
    const { campaign, problems } = parseCampaignFile('/tmp/r.yaml', `${base}retry_on: []\nmax_retries: 4\n`);
    expect(campaign).toBeDefined();
    expect(problems).toMatchObject([{ field: 'retry_on', severity: 'warning', line: 6 }]);
  });
});

describe('parseCampaignFile: predial', () => {
  const base = 'assistant_id: 1\nallowed_days: [monday]\nallowed_hours_start_time: "09:00"\nallowed_hours_end_time: "17:00"\nleads: { remote_campaign_id: 1 }\n';

  it('reads the check with its default timeout', () => {
    const { campaign, problems } = parseCampaignFile('/tmp/p.yaml', `${base}predial: { url: "https://crm.example/check", secret_env: CRM_PREDIAL_SECRET }\n`);
    expect(problems).toEqual([]);
    expect(campaign?.predial).toEqual({ url: 'https://crm.example/check', secretEnv: 'CRM_PREDIAL_SECRET', timeoutMs: 3000 });
  });

  it('names each bad field with its line: a URL that is not one, a missing secret_env, a timeout out of range', () => {
    const { campaign, problems } = parseCampaignFile('/tmp/p.yaml', `${base}predial:\n  url: "crm.example/check"\n  timeout_ms: 50\n`);
    expect(campaign).toBeUndefined();
    expect(at(problems, 'predial.url')).toMatchObject({ line: 7, severity: 'error' });
    expect(at(problems, 'predial.timeout_ms')).toMatchObject({ line: 8, severity: 'error' });
    expect(at(problems, 'predial.secret_env')).toMatchObject({ severity: 'error' });
  });
});

describe('parseCampaignFile: budget', () => {
  const base = 'assistant_id: 1\nallowed_days: [monday]\nallowed_hours_start_time: "09:00"\nallowed_hours_end_time: "17:00"\nleads: { file: leads.csv }\n';
  const file = '/campaigns/b.yaml';

  it('reads the caps and fills the assumed cost per call', () => {
    const { campaign, problems } = parseCampaignFile(file, `${base}budget: { max_cost: 250.00, max_cost_per_day: 50 }\n`);
    expect(problems.filter((p) => p.severity === 'error')).toEqual([]);
    expect(campaign?.budget).toEqual({ maxCost: 250, maxCostPerDay: 50, assumedCostPerCall: 1 });
  });

  it('names the field, the line and the fix for a bad amount and for a budget without a cap', () => {
    const quoted = parseCampaignFile(file, `${base}budget: { max_cost: "250" }\n`);
    expect(at(quoted.problems, 'budget.max_cost')).toMatchObject({ line: 6, message: 'must be a number, not "250"', hint: 'remove the quotes' });
    const negative = parseCampaignFile(file, `${base}budget:\n  max_cost_per_day: -5\n`);
    expect(at(negative.problems, 'budget.max_cost_per_day')).toMatchObject({ line: 7, message: '-5 is out of range' });
    const none = parseCampaignFile(file, `${base}budget: { assumed_cost_per_call: 0.4 }\n`);
    expect(at(none.problems, 'budget')).toMatchObject({ severity: 'error', message: 'sets no cap' });
    expect(none.campaign).toBeUndefined();
  });
});
