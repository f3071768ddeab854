// Bad input, broken campaign files, at the level of the running daemon: the real
// loadConfig and startApp, the simulator as the service. A broken file next to a good one
// never stops the good one, and `status` names the broken file, line, field and fix.
// (Files broken while the daemon runs: bad-input-reload.test.ts.)
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { goodCampaign, leadCsv, startDaemon, type Daemon } from '../fixtures/bad-input/daemon-harness.js';

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
  corpus('missing-fields.yaml', /missing-fields\.yaml:1:1 assistant_id: needs one of assistant_id or assistants — give exactly one of assistant_id, assistants/),
  corpus('not-a-mapping.yaml', /not-a-mapping\.yaml: must be a mapping of fields, not a list/),
  corpus('problems.json', /problems\.json:4:30 allowed_days\[1\]: "sundae" is not a day name \(did you mean "sunday"\?\)/, /:7:3 retry_intervall: unknown field .*rename it to retry_interval/),
  corpus('syntax-error.yaml', /syntax-error\.yaml:3:1: .*end with a \] — fix the syntax/),
  corpus('unknown-keys.yaml', /unknown-keys\.yaml:2:1 alowed_days: unknown field "alowed_days" \(did you mean "allowed_days"\?\)/, /:8:3 leads\.fiel: unknown field "fiel"/),
  corpus('wrong-shapes.yaml', /wrong-shapes\.yaml:2:15 allowed_days: must be a list, not "monday"/, /:6:19 lead_local_hours: must be a mapping of fields, not a list/),
  own('assistant-not-number.yaml', /assistant-not-number\.yaml:1:15 assistant_id: must be a whole number, not "abc"/),
  own('bad-numbers.yaml', /bad-numbers\.yaml:5:14 max_retries: must be a whole number, not Infinity — use a whole number from 0 to 20/, /:6:17 retry_interval: -5 seconds is out of range/),
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
  own('unresolved-alias.yaml', /unresolved-alias\.yaml:2:15: Unresolved alias \(the anchor must be set before the alias\): days — fix the syntax/),
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
