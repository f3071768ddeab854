import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkLeadFile, checkSuppressionFile } from '../../src/config/check-data-files.js';
import { loadConfig } from '../../src/config/load.js';

const root = path.resolve(import.meta.dirname, '../..');

describe('the shipped example config (used by the demo)', () => {
  it('loads offline without errors or warnings', async () => {
    const loaded = await loadConfig(path.join(root, 'config/campaignd.yaml'), {});
    expect(loaded.problems).toEqual([]);
    expect(loaded.campaigns.map((c) => c.name)).toEqual(['demo', 'follow-up']);
  });

  it('runs all day, every day, against the local simulator, with the token from the environment', async () => {
    const { daemon, campaigns } = await loadConfig(path.join(root, 'config/campaignd.yaml'), {});
    const demo = campaigns[0];
    expect(demo).toMatchObject({ allowedDays: [1, 2, 3, 4, 5, 6, 7], allowedHoursStart: 0, allowedHoursEnd: 0, maxCallsInParallel: 5, retryIntervalSeconds: 60, initialStatus: 'running' });
    expect(daemon.api.baseUrl).toBe('http://127.0.0.1:8787');
    expect(daemon.api.tokenFile).toBeUndefined();
  });

  it('writes nothing into the repository except ./data/', async () => {
    const { daemon } = await loadConfig(path.join(root, 'config/campaignd.yaml'), {});
    expect(path.relative(root, daemon.database).startsWith(`data${path.sep}`)).toBe(true);
  });

  it('has about 30 leads: a couple of invalid rows, a secondary number, timezones, no duplicates', async () => {
    const { campaigns } = await loadConfig(path.join(root, 'config/campaignd.yaml'), {});
    const demo = campaigns[0];
    if (!demo) throw new Error('no demo campaign');
    const { problems, summary } = await checkLeadFile(demo);
    expect(summary).toMatchObject({ rows: 31, valid: 29, invalid: 2, duplicates: 0 });
    expect(problems.map((p) => [p.line, p.severity])).toEqual([
      [31, 'warning'],
      [32, 'warning'],
    ]);
  });

  it("moves the demo's interested people to the follow-up campaign, whose lead file is usable", async () => {
    const { campaigns } = await loadConfig(path.join(root, 'config/campaignd.yaml'), {});
    const [demo, followUp] = campaigns;
    expect(demo?.onResult?.map((r) => r.then)).toContainEqual({ kind: 'move-to', campaign: 'follow-up' });
    const { problems, summary } = await checkLeadFile(followUp!);
    expect(problems).toEqual([]);
    expect(summary).toMatchObject({ rows: 2, valid: 2 });
  });

  it('has a do-not-call list whose every line is usable', async () => {
    const { daemon } = await loadConfig(path.join(root, 'config/campaignd.yaml'), {});
    expect(await checkSuppressionFile(daemon)).toEqual([]);
  });
});
