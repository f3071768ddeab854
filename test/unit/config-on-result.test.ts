import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseCampaignFile } from '../../src/config/campaign.js';
import { loadConfig } from '../../src/config/load.js';

const BASE = `assistant_id: 1
allowed_days: [monday]
allowed_hours_start_time: "09:00"
allowed_hours_end_time: "17:00"
leads: { remote_campaign_id: 1 }
`;

function parse(extra: string) {
  return parseCampaignFile('/tmp/c.yaml', BASE + extra);
}

describe('on_result in a campaign file', () => {
  it('reads every kind of then, in order, durations in seconds', () => {
    const { campaign, problems } = parse(`on_result:
  - when: { variable: outcome, equals: wrong number }
    then: invalid
  - when: { variable: interest, in: [yes, maybe] }
    then: { move_to: sales }
  - when: { status: [busy, no-answer] }
    then: { retry_in: 2h }
  - when: { answered_by: [machine] }
    then: suppress
  - when: { variable: note, matches: "^done" }
    then: complete
`);
    expect(problems).toEqual([]);
    expect(campaign?.onResult).toEqual([
      { position: 1, variable: { name: 'outcome', equals: 'wrong number' }, then: { kind: 'invalid' } },
      { position: 2, variable: { name: 'interest', in: ['yes', 'maybe'] }, then: { kind: 'move-to', campaign: 'sales' } },
      { position: 3, status: ['busy', 'no-answer'], then: { kind: 'retry-in', seconds: 7200 } },
      { position: 4, answeredBy: ['machine'], then: { kind: 'suppress' } },
      { position: 5, variable: { name: 'note', matches: '^done' }, then: { kind: 'complete' } },
    ]);
  });

  it('says what is wrong with a rule: field, line and fix', () => {
    const { campaign, problems } = parse(`on_result:
  - when: { variable: interest }
    then: { move_to: sales }
  - when: {}
    then: complete
  - when: { equals: yes }
    then: complete
  - when: { variable: note, matches: "(" }
    then: complete
  - when: { status: [busy] }
    then: finish
  - when: { status: [busy] }
    then: { retry_in: 1h, move_to: sales }
`);
    expect(campaign).toBeUndefined();
    const byField = Object.fromEntries(problems.map((p) => [p.field, p]));
    expect(byField['on_result[0].when']?.message).toContain('no comparison');
    expect(byField['on_result[1].when']?.message).toContain('no condition');
    expect(byField['on_result[2].when.equals']?.hint).toContain('variable: NAME');
    expect(byField['on_result[3].when.matches']?.message).toContain('not a regular expression');
    expect(byField['on_result[4].then']?.hint).toContain('complete, suppress, invalid');
    expect(byField['on_result[5].then']?.hint).toContain('exactly one of retry_in, move_to');
    for (const p of problems) expect(p.line).toBeGreaterThan(5);
  });

  it('warns about a variable the campaign does not declare in extracted_variables', () => {
    const { campaign, problems } = parse(`extracted_variables: [interest, outcome]
on_result:
  - when: { variable: intrest, equals: yes }
    then: complete
`);
    expect(campaign).toBeDefined();
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ severity: 'warning', field: 'on_result[0].when.variable', line: 8, hint: 'did you mean "interest"?' });
  });
});

describe('move_to across campaign files', () => {
  const roots: string[] = [];
  afterEach(() => {
    for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
  });
  function dir(files: Record<string, string>): string {
    const root = mkdtempSync(path.join(tmpdir(), 'onr-'));
    roots.push(root);
    mkdirSync(path.join(root, 'campaigns'));
    writeFileSync(path.join(root, 'campaignd.yaml'), 'database: ":memory:"\ncampaigns_dir: campaigns\n');
    for (const [name, text] of Object.entries(files)) writeFileSync(path.join(root, 'campaigns', name), BASE + text);
    return root;
  }
  const move = (to: string) => `on_result:\n  - when: { variable: interest, equals: yes }\n    then: { move_to: ${to} }\n`;

  it('is an error when the target is not a campaign of campaigns_dir, with a suggestion', async () => {
    const root = dir({ 'a.yaml': move('sales'), 'sale.yaml': '' });
    const loaded = await loadConfig(path.join(root, 'campaignd.yaml'), { CAMPAIGND_WEBHOOK_SECRET: 'x'.repeat(32) });
    const p = loaded.problems.find((x) => x.field === 'on_result[0].then.move_to');
    expect(p).toMatchObject({ severity: 'error', line: 8, hint: 'did you mean "sale"?' });
    expect(p?.message).toContain('"sales", which is not in campaigns_dir');
    expect(loaded.brokenCampaigns.map((b) => b.name)).toEqual(['a']);
  });

  it('is an error for every rule of a cycle, the cycle named; a chain without one is fine', async () => {
    const root = dir({ 'a.yaml': move('b'), 'b.yaml': move('c'), 'c.yaml': move('a'), 'd.yaml': move('e'), 'e.yaml': '' });
    const loaded = await loadConfig(path.join(root, 'campaignd.yaml'), { CAMPAIGND_WEBHOOK_SECRET: 'x'.repeat(32) });
    const cycles = loaded.problems.filter((x) => x.message.includes('cycle'));
    expect(cycles.map((c) => path.basename(c.file)).sort()).toEqual(['a.yaml', 'b.yaml', 'c.yaml']);
    expect(cycles.find((c) => c.file.endsWith('a.yaml'))?.message).toBe('makes a cycle: a → b → c → a');
    expect(loaded.campaigns.map((c) => c.name).sort()).toEqual(['d', 'e']);
  });

  it('is an error to move to the campaign itself', async () => {
    const root = dir({ 'a.yaml': move('a') });
    const loaded = await loadConfig(path.join(root, 'campaignd.yaml'), { CAMPAIGND_WEBHOOK_SECRET: 'x'.repeat(32) });
    expect(loaded.problems.find((x) => x.field === 'on_result[0].then.move_to')?.message).toBe('makes a cycle: a → a');
  });
});
