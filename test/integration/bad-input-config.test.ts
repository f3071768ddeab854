// Bad input, broken campaign files, at the level of the running daemon: the real
// loadConfig and startApp, the simulator as the service. A broken file next to a good one
// never stops the good one; `status` names the broken file, line, field and fix; a file
// broken later (SIGHUP) stops only its own campaign, its live calls are still followed,
// and once fixed the campaign finishes every lead it had.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { goodCampaign, leadCsv, startDaemon, type Daemon } from '../fixtures/bad-input/daemon-harness.js';
import { waitUntil } from '../helpers/wait.js';

const CORPUS = path.resolve(import.meta.dirname, '../fixtures/config/campaigns');
const OWN = path.resolve(import.meta.dirname, '../fixtures/bad-input/campaigns');

const GOOD_LEADS = 4;
const goodNumbers = Array.from({ length: GOOD_LEADS }, (_, i) => `+1202555${1000 + i}`);
const FINAL = ['completed', 'reached-max-retries'];

let daemon: Daemon | null = null;
afterEach(async () => {
  await daemon?.close();
  daemon = null;
});

interface BrokenCase {
  /** The fixture (in the config corpus or in bad-input/campaigns). */
  file: string;
  dir: string;
  /** What `status` must say about it: the file name, line:column and field where they exist. */
  expected: RegExp[];
}

const corpus = (file: string, ...expected: RegExp[]): BrokenCase => ({ file, dir: CORPUS, expected });
const own = (file: string, ...expected: RegExp[]): BrokenCase => ({ file, dir: OWN, expected });

const brokenFiles: BrokenCase[] = [
  corpus('bad name!.yaml', /bad name!\.yaml: .*characters not allowed in names — rename the file or set name:/),
  corpus('bad-json.json', /bad-json\.json:4:1: invalid JSON: .* — fix the syntax/),
  corpus('duplicate-key.yaml', /duplicate-key\.yaml:5:1: Map keys must be unique/),
  corpus('empty-days.yaml', /empty-days\.yaml:1:15 assistant_id: must be a whole number, not "12" — remove the quotes/, /:2:15 allowed_days: must not be empty/, /:4:25 allowed_hours_end_time: "17:00:60" is not a time of day/),
  corpus('empty.yaml', /empty\.yaml: the file is empty — write the campaign fields/),
  corpus('good.yaml', /good\.yaml:19:9 leads\.file: file .*spring\.csv cannot be read: no such file or folder — create it, or fix the path/),
  corpus('many-problems.yaml', /many-problems\.yaml:3:11 timezone: "Europe\/Berln" is not an IANA time zone \(did you mean "Europe\/Berlin"\?\)/, /:2:15 assistant_id: -4 is out of range/),
  corpus('missing-fields.yaml', /missing-fields\.yaml:1:1 assistant_id: missing required field "assistant_id" — add assistant_id/),
  corpus('not-a-mapping.yaml', /not-a-mapping\.yaml: must be a mapping of fields, not a list/),
  corpus('problems.json', /problems\.json:4:30 allowed_days\[1\]: "sundae" is not a day name \(did you mean "sunday"\?\)/, /:7:3 retry_intervall: unknown field .*rename it to retry_interval/),
  corpus('syntax-error.yaml', /syntax-error\.yaml:3:1: .*end with a \] — fix the syntax/),
  corpus('unknown-keys.yaml', /unknown-keys\.yaml:2:1 alowed_days: unknown field "alowed_days" \(did you mean "allowed_days"\?\)/, /:8:3 leads\.fiel: unknown field "fiel"/),
  corpus('wrong-shapes.yaml', /wrong-shapes\.yaml:2:15 allowed_days: must be a list, not "monday"/, /:6:19 lead_local_hours: must be a mapping of fields, not a list/),
  own('assistant-not-number.yaml', /assistant-not-number\.yaml:1:15 assistant_id: must be a whole number, not "abc"/),
  own('bad-numbers.yaml', /bad-numbers\.yaml:5:14 max_retries: must be a whole number, not Infinity — use a whole number from 0 to 20/, /:6:17 retry_interval: -5 is out of range/),
  own('bad-values.yaml', /bad-values\.yaml:5:9 status: "stopped" is not a campaign status — use one of running, paused/, /:6:12 retry_on\[0\]: "hangup"/, /:7:18 blackout_dates\[0\]: "2026-02-30" is not a real date/),
  own('binary-junk.yaml', /binary-junk\.yaml: must be a mapping of fields/),
  own('huge-unknown-field.yaml', /huge-unknown-field\.yaml:6:1 notes: unknown field "notes"/),
  own('missing-lead-file.yaml', /missing-lead-file\.yaml:5:16 leads\.file: file .*nowhere\.csv cannot be read: no such file or folder/),
  own('no-lead-source.yaml', /no-lead-source\.yaml:5:1 leads: needs one of file or remote_campaign_id/),
  own('only-separator.yaml', /only-separator\.yaml: the file is empty/),
  own('tab-indent.yaml', /tab-indent\.yaml:6:1: Tabs are not allowed as indentation/),
  own('truncated.json', /truncated\.json:5:15: invalid JSON: Unterminated string/),
  own('two-lead-sources.yaml', /two-lead-sources\.yaml:5:1 leads: sets both file and remote_campaign_id/),
  own('unknown-zone.yaml', /unknown-zone\.yaml:3:11 timezone: "Mars\/Olympus_Mons" is not an IANA time zone/),
  own('unresolved-alias.yaml', /unresolved-alias\.yaml:\d+:\d+: Unresolved alias .*days/),
  own('utf16.yaml', /utf16\.yaml: must be a mapping of fields/),
];

/** The fixture as text (placeholders filled by the harness), or raw bytes when it is binary. */
function fixture(c: BrokenCase): string | Buffer {
  const bytes = fs.readFileSync(path.join(c.dir, c.file));
  return bytes.includes(0) ? bytes : bytes.toString('utf8');
}

async function expectGoodCampaignFinished(d: Daemon): Promise<void> {
  await d.waitCampaignDone('good');
  expect((await d.leadStates('good')).every((s) => FINAL.includes(s))).toBe(true);
  expect(await d.leadStates('good')).toHaveLength(GOOD_LEADS);
  // Every good lead was called exactly once (max_retries 0, every call answered).
  expect(d.simCallsTo(goodNumbers)).toBe(GOOD_LEADS);
  const good = (await d.status()).campaigns.find((c) => c.name === 'good');
  expect(good?.problem).toBeNull();
}

describe('bad input: a broken campaign file next to a good one at start', () => {
  it.each(brokenFiles)('$file: the good campaign dials, status names the broken file', async (c) => {
    daemon = await startDaemon({
      campaigns: { 'the-good-one.yaml': goodCampaign('good', '../leads/good.csv'), [c.file]: fixture(c) },
      leads: { 'good.csv': leadCsv(GOOD_LEADS), 'victim.csv': leadCsv(3, 100) },
    });
    expect(daemon.config.brokenCampaigns.map((b) => path.basename(b.file))).toEqual([c.file]);
    const problems = (await daemon.problems()).join('\n');
    for (const re of c.expected) expect(problems).toMatch(re);
    await expectGoodCampaignFinished(daemon);
  });
});

interface ReloadCase {
  name: string;
  /** The new content of victim.yaml, or null to delete the file. */
  content: () => string | Buffer | null;
  /** What `status` must say after the reload. */
  expected: RegExp[];
}

const fromFixture = (c: BrokenCase): (() => string | Buffer) => () => fixture(c);
const byName = (file: string): BrokenCase => brokenFiles.find((c) => c.file === file)!;
const VICTIM_LEADS = 8;
const victimNumbers = Array.from({ length: VICTIM_LEADS }, (_, i) => `+1202555${1100 + i}`);
const victimCampaign = (): string => goodCampaign('victim', '../leads/victim.csv').replace('max_calls_in_parallel: 2', 'max_calls_in_parallel: 1');

const reloadCases: ReloadCase[] = [
  { name: 'syntax error', content: fromFixture(byName('syntax-error.yaml')), expected: [/victim\.yaml:3:1: .*fix the syntax/] },
  { name: 'required fields removed', content: fromFixture(byName('missing-fields.yaml')), expected: [/victim\.yaml:1:1 assistant_id: missing required field/] },
  { name: 'wrong shapes', content: fromFixture(byName('wrong-shapes.yaml')), expected: [/victim\.yaml:2:15 allowed_days: must be a list/] },
  { name: 'misspelt keys', content: fromFixture(byName('unknown-keys.yaml')), expected: [/victim\.yaml:2:1 alowed_days: unknown field "alowed_days" \(did you mean "allowed_days"\?\)/] },
  { name: 'emptied', content: fromFixture(byName('empty.yaml')), expected: [/victim\.yaml: the file is empty/] },
  { name: 'tab indentation', content: fromFixture(byName('tab-indent.yaml')), expected: [/victim\.yaml:6:1: Tabs are not allowed/] },
  { name: 'binary junk', content: fromFixture(byName('binary-junk.yaml')), expected: [/victim\.yaml: must be a mapping of fields/] },
  { name: 'bad values', content: fromFixture(byName('bad-values.yaml')), expected: [/victim\.yaml:5:9 status: "stopped" is not a campaign status/] },
  { name: 'unknown zone', content: fromFixture(byName('unknown-zone.yaml')), expected: [/victim\.yaml:3:11 timezone: "Mars\/Olympus_Mons" is not an IANA time zone/] },
  { name: 'lead file path broken', content: () => victimCampaign().replace('../leads/victim.csv', '../leads/gone.csv'), expected: [/victim\.yaml:10:16 leads\.file: file .*gone\.csv cannot be read/] },
  { name: 'hours garbled', content: () => victimCampaign().replace('"00:00"', '"9am"'), expected: [/victim\.yaml:5:27 allowed_hours_start_time: "9am" is not a time of day/] },
  { name: 'file deleted', content: () => null, expected: [/victim: its campaign file is gone from campaigns_dir/] },
];

describe('bad input: a campaign file broken while the daemon runs (SIGHUP reload)', () => {
  it.each(reloadCases)('$name: that campaign stops dialing, its live calls are followed, no lead is lost', async (c) => {
    daemon = await startDaemon({
      campaigns: { 'good.yaml': goodCampaign('good', '../leads/good.csv').replace('max_calls_in_parallel: 2', 'max_calls_in_parallel: 1'), 'victim.yaml': victimCampaign() },
      leads: { 'good.csv': leadCsv(10), 'victim.csv': leadCsv(VICTIM_LEADS, 100) },
      callDurationSeconds: { min: 60, max: 120 },
      scale: 2000,
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
