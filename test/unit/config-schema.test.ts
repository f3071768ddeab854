import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseDocument } from 'yaml';
import { describe, expect, it } from 'vitest';
import { CAMPAIGN_FIELDS } from '../../src/config/campaign-spec.js';
import { DAEMON_FIELDS } from '../../src/config/daemon-spec.js';
import type { Field } from '../../src/config/spec.js';
import { campaignJsonSchema, campaignJsonSchemaText } from '../../src/config/json-schema.js';

const root = path.resolve(import.meta.dirname, '../..');
const schemaFile = path.join(root, 'config/campaign.schema.json');

describe('config/campaign.schema.json', () => {
  it('is exactly what the campaign field table generates (run `npx tsx src/config/write-schema.ts` after changing fields)', () => {
    expect(readFileSync(schemaFile, 'utf8')).toBe(campaignJsonSchemaText());
  });

  it('describes every field of the checker, with the same required fields, and forbids others', () => {
    const schema = campaignJsonSchema() as { properties: Record<string, { description?: string }>; required: string[]; additionalProperties: boolean };
    expect(Object.keys(schema.properties).filter((k) => k !== '$schema')).toEqual(Object.keys(CAMPAIGN_FIELDS));
    expect(schema.required).toEqual(['allowed_days', 'allowed_hours_start_time', 'allowed_hours_end_time', 'leads']);
    expect(schema.additionalProperties).toBe(false);
    for (const [key, prop] of Object.entries(schema.properties)) if (key !== '$schema') expect(prop.description, key).toBeTruthy();
  });

  it('requires exactly one of assistant_id and assistants, like the checker', () => {
    expect((campaignJsonSchema() as { oneOf: unknown }).oneOf).toEqual([{ required: ['assistant_id'] }, { required: ['assistants'] }]);
  });

  it('requires exactly one lead source, like the checker', () => {
    const schema = campaignJsonSchema() as { properties: { leads: { oneOf: unknown } } };
    expect(schema.properties.leads.oneOf).toEqual([{ required: ['file'] }, { required: ['remote_campaign_id'] }]);
  });

  it('is documented field by field in docs/configuration.md', () => {
    const reference = readFileSync(path.join(root, 'docs/configuration.md'), 'utf8');
    const documented = (key: string): boolean => reference.includes(`| \`${key}\` |`);
    for (const key of leafFields(CAMPAIGN_FIELDS)) expect(documented(key), key).toBe(true);
    for (const key of leafFields(DAEMON_FIELDS)) expect(documented(key), key).toBe(true);
    expect(reference).toContain('yaml-language-server: $schema=');
  });

  it('ships in the package, where the README tells an installed package\'s user to point the editor', async () => {
    const packed = await new Promise<string>((resolve, reject) =>
      execFile('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: root }, (err, stdout) => (err ? reject(err) : resolve(stdout))),
    );
    const files = (JSON.parse(packed) as { files: { path: string }[] }[])[0]!.files.map((f) => f.path);
    expect(files).toContain('config/campaign.schema.json');
    const readme = readFileSync(path.join(root, 'README.md'), 'utf8');
    expect(readme).toContain('$schema=../node_modules/campaignd/config/campaign.schema.json');
  });

  it('is named by the example campaign for editors', () => {
    const demo = readFileSync(path.join(root, 'config/campaigns/demo.yaml'), 'utf8');
    expect(demo.split('\n')[0]).toBe('# yaml-language-server: $schema=../campaign.schema.json');
    expect(parseDocument(demo).errors).toEqual([]);
  });
});

// Dotted names of the fields that hold values: `leads.file`, `api.rate_limit.burst`, …
function leafFields(fields: Readonly<Record<string, Field>>, prefix = ''): string[] {
  return Object.entries(fields).flatMap(([key, field]) => {
    const spec = field.spec;
    if (spec.kind === 'object' && key !== 'lead_local_hours') return leafFields(spec.fields, `${prefix}${key}.`);
    // A list of objects (hooks) is documented item field by item field: `hooks[].url`.
    if (spec.kind === 'list' && spec.item.kind === 'object') return leafFields(spec.item.fields, `${prefix}${key}[].`);
    return [`${prefix}${key}`];
  });
}
