// What a user reads never points at a document they do not have (issue 22): the field
// descriptions editors show from the JSON Schema, the shipped config examples and the docs/
// pages name a README section or a docs/ page instead of the design notes' sections.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CAMPAIGN_FIELDS } from '../../src/config/campaign-spec.js';
import { DAEMON_FIELDS } from '../../src/config/daemon-spec.js';
import type { Field } from '../../src/config/spec.js';
import { RULE_FIELDS } from '../../src/config/calling-rules.js';

const root = path.resolve(import.meta.dirname, '../..');
/** The design notes by name, or their numbered sections and rules cited bare. */
const OUTSIDE = /product\.md|shared\/design|\((?:[^)]*\b)?(?:section|rule|§)\s*\d/;

function descriptions(fields: Readonly<Record<string, Field>>, prefix = ''): [string, string][] {
  return Object.entries(fields).flatMap(([key, field]): [string, string][] => {
    const own: [string, string] = [`${prefix}${key}`, field.description];
    const spec = field.spec.kind === 'list' ? field.spec.item : field.spec;
    return spec.kind === 'object' ? [own, ...descriptions(spec.fields, `${prefix}${key}.`)] : [own];
  });
}

function filesUnder(dir: string): string[] {
  return readdirSync(path.join(root, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /\.(md|ya?ml|json|txt)$/.test(e.name))
    .map((e) => path.relative(root, path.join(e.parentPath, e.name)));
}

describe('user-facing text names only what a user has', () => {
  it('field descriptions (campaign, daemon and calling-rules files)', () => {
    const all = [...descriptions(CAMPAIGN_FIELDS), ...descriptions(DAEMON_FIELDS, 'daemon.'), ...descriptions(RULE_FIELDS, 'rules.')];
    expect(all.filter(([, text]) => OUTSIDE.test(text))).toEqual([]);
  });

  it('the shipped config folder (schema, examples) and the docs pages', () => {
    const offending = [...filesUnder('config'), ...filesUnder('docs')].filter((f) => /product\.md|shared\/design/.test(readFileSync(path.join(root, f), 'utf8')));
    expect(offending).toEqual([]);
  });
});
