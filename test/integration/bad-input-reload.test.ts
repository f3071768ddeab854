// Bad input, campaign files broken while the daemon runs (the SIGHUP path: loadConfig
// again, app.reload): only that campaign stops dialing, with its problem in `status`; its
// live calls are still followed to their end; no lead is lost, and once the file is fixed
// the campaign calls every lead it had, each once.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { goodCampaign, leadCsv, startDaemon, type Daemon } from '../fixtures/bad-input/daemon-harness.js';
import { waitUntil } from '../helpers/wait.js';

const CORPUS = path.resolve(import.meta.dirname, '../fixtures/config/campaigns');
const OWN = path.resolve(import.meta.dirname, '../fixtures/bad-input/campaigns');

let daemon: Daemon | null = null;
afterEach(async () => {
  await daemon?.close();
  daemon = null;
});

/** A fixture as text (placeholders filled by the harness), or raw bytes when it is binary. */
const fromFixture =
  (file: string): (() => string | Buffer) =>
  () => {
    const bytes = fs.readFileSync(fs.existsSync(path.join(CORPUS, file)) ? path.join(CORPUS, file) : path.join(OWN, file));
    return bytes.includes(0) ? bytes : bytes.toString('utf8');
  };

interface ReloadCase {
  name: string;
  /** The new content of victim.yaml, or null to delete the file. */
  content: () => string | Buffer | null;
  /** What `status` must say after the reload. */
  expected: RegExp[];
}

const VICTIM_LEADS = 6;
const victimNumbers = Array.from({ length: VICTIM_LEADS }, (_, i) => `+1202555${1100 + i}`);
const victimCampaign = (): string => goodCampaign('victim', '../leads/victim.csv').replace('max_calls_in_parallel: 2', 'max_calls_in_parallel: 1');

const reloadCases: ReloadCase[] = [
  { name: 'syntax error', content: fromFixture('syntax-error.yaml'), expected: [/victim\.yaml:3:1: .*fix the syntax/] },
  { name: 'required fields removed', content: fromFixture('missing-fields.yaml'), expected: [/victim\.yaml:1:1 assistant_id: needs one of assistant_id or assistants/] },
  { name: 'wrong shapes', content: fromFixture('wrong-shapes.yaml'), expected: [/victim\.yaml:2:15 allowed_days: must be a list/] },
  { name: 'misspelt keys', content: fromFixture('unknown-keys.yaml'), expected: [/victim\.yaml:2:1 alowed_days: unknown field "alowed_days" \(did you mean "allowed_days"\?\)/] },
  { name: 'emptied', content: fromFixture('empty.yaml'), expected: [/victim\.yaml: the file is empty/] },
  { name: 'tab indentation', content: fromFixture('tab-indent.yaml'), expected: [/victim\.yaml:6:1: Tabs are not allowed/] },
  { name: 'binary junk', content: fromFixture('binary-junk.yaml'), expected: [/victim\.yaml: must be a mapping of fields/] },
  { name: 'bad values', content: fromFixture('bad-values.yaml'), expected: [/victim\.yaml:5:9 status: "stopped" is not a campaign status/] },
  { name: 'unknown zone', content: fromFixture('unknown-zone.yaml'), expected: [/victim\.yaml:3:11 timezone: "Mars\/Olympus_Mons" is not an IANA time zone/] },
  { name: 'lead file path broken', content: () => victimCampaign().replace('../leads/victim.csv', '../leads/gone.csv'), expected: [/victim\.yaml:10:16 leads\.file: file .*gone\.csv cannot be read/] },
  { name: 'hours garbled', content: () => victimCampaign().replace('"00:00"', '"9am"'), expected: [/victim\.yaml:5:27 allowed_hours_start_time: "9am" is not a time of day/] },
  { name: 'file deleted', content: () => null, expected: [/victim: its campaign file is gone from campaigns_dir/] },
];

describe('bad input: a campaign file broken while the daemon runs (SIGHUP reload)', () => {
  it.each(reloadCases)('$name: that campaign stops dialing, its live calls are followed, no lead is lost', async (c) => {
    daemon = await startDaemon({
      campaigns: { 'good.yaml': goodCampaign('good', '../leads/good.csv').replace('max_calls_in_parallel: 2', 'max_calls_in_parallel: 1'), 'victim.yaml': victimCampaign() },
      leads: { 'good.csv': leadCsv(8), 'victim.csv': leadCsv(VICTIM_LEADS, 100) },
      callDurationSeconds: { min: 60, max: 120 },
      scale: 3000,
    });
    const d = daemon;
    await waitUntil(() => d.simCallsTo(victimNumbers) >= 1, { message: 'the first victim call' });

    const content = c.content();
    const file = path.join(d.dir, 'campaigns', 'victim.yaml');
    if (content === null) fs.rmSync(file);
    else d.writeCampaign('victim.yaml', content);
    await d.reload();

    const problems = (await d.problems()).join('\n');
    for (const re of c.expected) expect(problems).toMatch(re);
    const victim = (await d.status()).campaigns.find((s) => s.name === 'victim');
    expect(victim?.problem).toBeTruthy();

    // Live calls are still followed to their end (polling closes them).
    const live = async (): Promise<number> =>
      (
        await d.app.db
          .selectFrom('attempts')
          .innerJoin('campaigns', 'campaigns.id', 'attempts.campaign_id')
          .select('attempts.id')
          .where('campaigns.name', '=', 'victim')
          .where('attempts.state', 'in', ['dialing', 'placed', 'unknown'])
          .execute()
      ).length;
    await waitUntil(async () => (await live()) === 0, { message: 'the victim campaign live calls to end' });
    const placedBeforeStop = d.simCallsTo(victimNumbers);
    expect(placedBeforeStop).toBeLessThan(VICTIM_LEADS);

    // The good campaign finishes; the broken one placed nothing more meanwhile.
    await d.waitCampaignDone('good');
    expect(d.simCallsTo(victimNumbers)).toBe(placedBeforeStop);
    const states = await d.leadStates('victim');
    expect(states).toHaveLength(VICTIM_LEADS);
    expect(states.filter((s) => s === 'pending')).toHaveLength(VICTIM_LEADS - placedBeforeStop);

    // Fixed and reloaded: every lead it had is called, each exactly once.
    fs.writeFileSync(file, victimCampaign().replaceAll('{{ASSISTANT}}', String(d.config.campaigns[0]?.assistantId)));
    await d.reload();
    expect((await d.status()).campaigns.find((s) => s.name === 'victim')?.problem).toBeNull();
    await d.waitCampaignDone('victim');
    expect(d.simCallsTo(victimNumbers)).toBe(VICTIM_LEADS);
    expect(await d.problems()).toEqual([]);
  });
});
