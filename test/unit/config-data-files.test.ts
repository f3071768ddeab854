import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkLeadFile, checkSuppressionFile, MAX_ROW_WARNINGS } from '../../src/config/check-data-files.js';
import type { CampaignConfig, DaemonConfig } from '../../src/config/types.js';

let dir = '';
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'campaignd-data-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function campaignWith(csv: string, extra: Partial<CampaignConfig> = {}): Promise<CampaignConfig> {
  const file = path.join(dir, `leads-${Math.random().toString(36).slice(2)}.csv`);
  await writeFile(file, csv);
  return {
    name: 'c',
    file: path.join(dir, 'c.yaml'),
    assistantId: 1,
    allowedDays: [1],
    allowedHoursStart: 0,
    allowedHoursEnd: 0,
    maxCallsInParallel: 1,
    maxRetries: 0,
    retryIntervalSeconds: 0,
    markCompleteWhenNoLeads: true,
    retryOn: [],
    blackoutDates: [],
    initialStatus: 'running',
    leads: { file },
    allowDuplicates: false,
    ...extra,
  };
}

describe('checkLeadFile', () => {
  it('reports invalid rows and duplicates as warnings with their line numbers', async () => {
    const campaign = await campaignWith('phone_number,name\n+14155550101,a\n12,b\n\n+1 (415) 555-0101,c\n4155550102,d\n');
    const { problems, summary } = await checkLeadFile(campaign);
    expect(summary).toMatchObject({ rows: 4, valid: 2, invalid: 2, duplicates: 1 });
    expect(problems.map((p) => [p.line, p.severity, p.field])).toEqual([
      [3, 'warning', 'phone_number'],
      [5, 'warning', 'phone_number'],
      [6, 'warning', 'phone_number'],
    ]);
    expect(problems[1]?.message).toBe('same number as line 2; both rows become one lead');
    expect(problems[2]?.message).toContain('national number without a country');
  });

  it('uses default_country and allow_duplicates', async () => {
    const campaign = await campaignWith('phone_number\n4155550102\n+14155550102\n', { defaultCountry: 'US', allowDuplicates: true });
    const { problems, summary } = await checkLeadFile(campaign);
    expect(problems).toEqual([]);
    expect(summary).toMatchObject({ rows: 2, valid: 2, duplicates: 0 });
  });

  it(`lists at most ${MAX_ROW_WARNINGS} rows and counts the rest`, async () => {
    const rows = Array.from({ length: MAX_ROW_WARNINGS + 5 }, (_, i) => `bad-${i}`).join('\n');
    const { problems, summary } = await checkLeadFile(await campaignWith(`phone_number\n${rows}\n`));
    expect(summary?.invalid).toBe(MAX_ROW_WARNINGS + 5);
    expect(problems).toHaveLength(MAX_ROW_WARNINGS + 1);
    expect(problems.at(-1)?.message).toBe('5 more rows with problems not listed');
  });

  it('is an error when the file has no phone_number column, and a warning when it has no rows', async () => {
    const noColumn = await checkLeadFile(await campaignWith('number,name\n+14155550101,a\n'));
    expect(noColumn.problems).toHaveLength(1);
    expect(noColumn.problems[0]).toMatchObject({ severity: 'error', message: expect.stringContaining('phone_number') });
    const noRows = await checkLeadFile(await campaignWith('phone_number\n'));
    expect(noRows.problems).toMatchObject([{ severity: 'warning', message: 'the lead file has a header but no rows' }]);
  });

  it('skips campaigns whose leads come from the service', async () => {
    const campaign = await campaignWith('phone_number\n', { leads: { remoteCampaignId: 3 } });
    expect(await checkLeadFile(campaign)).toEqual({ problems: [] });
  });
});

describe('checkSuppressionFile', () => {
  it('reports lines that are not numbers with their line', async () => {
    const file = path.join(dir, 'dnc.txt');
    await writeFile(file, '# list\n+14155550101\nnot a number\n\n+4915112345678 # note\n');
    const daemon = { suppressionFile: file } as DaemonConfig;
    const problems = await checkSuppressionFile(daemon);
    expect(problems).toMatchObject([{ file, line: 3, severity: 'warning', message: expect.stringContaining('"not a number"') }]);
  });
});
