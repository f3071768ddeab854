import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseCampaignFile } from '../../src/config/campaign.js';
import { checkOnline } from '../../src/config/online-check.js';
import type { LoadedConfig } from '../../src/config/types.js';

const BASE = `allowed_days: [monday]
allowed_hours_start_time: "09:00"
allowed_hours_end_time: "17:00"
leads: { file: leads.csv }
`;

function parse(extra: string) {
  return parseCampaignFile('/tmp/ab.yaml', BASE + extra);
}

describe('campaign file: assistant variants', () => {
  it('reads assistants and success_when; assistantId is the first variant', () => {
    const { campaign, problems } = parse(`assistants:
  - { id: 12, weight: 3, name: friendly }
  - { id: 14, weight: 1, name: direct }
success_when: { variable: interested, in: [yes, maybe] }
`);
    expect(problems).toEqual([]);
    expect(campaign!.assistantId).toBe(12);
    expect(campaign!.variants).toEqual([
      { name: 'friendly', assistantId: 12, weight: 3 },
      { name: 'direct', assistantId: 14, weight: 1 },
    ]);
    expect(campaign!.successWhen).toEqual({ variable: 'interested', values: ['yes', 'maybe'] });
    expect(parse(`assistants: [{ id: 1, weight: 1, name: a }]\nsuccess_when: { variable: x, equals: "Yes" }\n`).campaign!.successWhen).toEqual({ variable: 'x', values: ['Yes'] });
  });

  it.each([
    ['', 'assistant_id', 'needs one of assistant_id or assistants'],
    ['assistant_id: 3\nassistants: [{ id: 1, weight: 1, name: a }]\n', 'assistants', 'sets both assistant_id and assistants'],
    ['assistants: [{ id: 1, weight: 0, name: a }]\n', 'assistants[0].weight', ''],
    ['assistants: [{ id: 1, weight: 1, name: a }, { id: 2, weight: 1, name: a }]\n', 'assistants[1].name', 'a second time'],
    ['assistants: [{ id: 1, weight: 1 }]\n', 'assistants[0].name', 'missing required field'],
    ['assistants: []\n', 'assistants', ''],
    ['assistants: [{ id: 1, weight: 1, name: a }]\nsuccess_when: { variable: x, in: [y], equals: z }\n', 'success_when', 'sets both in and equals'],
  ])('refuses %j with an error at %j', (extra, field, message) => {
    const { campaign, problems } = parse(extra);
    expect(campaign).toBeUndefined();
    const errors = problems.filter((p) => p.severity === 'error');
    expect(errors.length).toBeGreaterThan(0);
    const e = errors.find((p) => (p.field ?? '') === field) ?? errors[0]!;
    expect(e.field ?? '').toBe(field);
    expect(e.message).toContain(message);
    expect(e.hint).toBeTruthy();
    expect(e.file).toBe('/tmp/ab.yaml');
  });

  it('warns when success_when is given with a single assistant', () => {
    const { campaign, problems } = parse('assistant_id: 4\nsuccess_when: { variable: x, equals: y }\n');
    expect(campaign).toBeDefined();
    expect(problems.map((p) => [p.severity, p.field])).toEqual([['warning', 'success_when']]);
  });
});

describe('validate --online with assistant variants', () => {
  it("checks every variant's assistant and points at its id in the file", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'campaignd-variants-'));
    try {
      const file = path.join(dir, 'ab.yaml');
      const text = `${BASE}assistants:\n  - { id: 1, weight: 1, name: a }\n  - { id: 7, weight: 1, name: b }\n`;
      writeFileSync(file, text);
      const { campaign } = parseCampaignFile(file, text);
      const loaded = { daemon: { file: path.join(dir, 'campaignd.yaml'), api: {} }, campaigns: [campaign!], problems: [], brokenCampaigns: [] } as unknown as LoadedConfig;
      const problems = await checkOnline(loaded, { listOutboundAssistants: async () => [{ id: 1, name: 'Sales', type: 'outbound' }] });
      expect(problems).toEqual([
        expect.objectContaining({ file, field: 'assistants[1].id', line: 7, message: "assistant 7 is not one of this account's outbound assistants", severity: 'error' }),
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
