// Nothing in the repository points at documents outside it (issue 22). The product
// contract, the notes on the live service and the data folder the maintainers keep beside
// the repository are not shipped: a user or a new maintainer reading a comment or a doc
// that cites them cannot follow it. Comments state the rule itself or cite the design
// document that ships (docs/design.md §N, rule N); user-facing text names a README section
// or a docs/ page. (test/unit/user-facing-text.test.ts checks the JSON Schema's field
// descriptions, which are built from code rather than read from a file.)
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
/** The folders (and the one file) whose every tracked file is checked. */
const CHECKED = ['src', 'test', 'bench', 'scripts', 'migrations', 'deploy', 'docs', 'config', 'README.md'];
/** This file: its examples and allowed lines name what the others must not. */
const SELF = 'test/unit/no-outside-references.test.ts';

/**
 * Names of the documents and data outside the repository. (The outside notes on code layout
 * share their file name with docs/architecture.md, which ships, so that name is not checked.)
 */
const OUTSIDE_DOCUMENT = /product\.md|service-facts\.md|\.\.\/shared|\bshared\/(?:design|spec|data)\b/;

/**
 * Lines allowed to name the outside data folder, and why: the phone-zone generator reads its
 * input from where the maintainers keep libphonenumber's files (a default, overridden by its
 * DATA_DIR argument), and the test that checks the generated table against that input reads
 * the same place when it exists. Neither is documentation: it is the generator's input path.
 */
const ALLOWED: readonly { file: string; line: string }[] = [
  { file: 'scripts/derive-phone-zones.ts', line: '//   npx tsx scripts/derive-phone-zones.ts [DATA_DIR]      (default ../shared/data)' },
  { file: 'test/unit/phone-zones-lookup.test.ts', line: "    const file = new URL('../../../shared/data/libphonenumber-timezones-map_data.txt', import.meta.url);" },
];

/** A numbered section cited bare ("section 11", "§3.1"); legal citations write "§ 501.616". */
const SECTION = /§\d|\bsections? \d/i;
/** Sections of the service's interface specification are cited as "spec section N". */
const SPEC_SECTION = /\bspec(?:'s)? (?:sections? |§)\d/i;

/** The problem with one line of `file`, or null. */
export function outsideReference(file: string, line: string): string | null {
  if (OUTSIDE_DOCUMENT.test(line) && !ALLOWED.some((a) => a.file === file && a.line === line)) {
    return 'names a document outside the repository: state the rule, or cite docs/design.md, a README section or a docs/ page';
  }
  if (file.startsWith('src/') && SECTION.test(line) && !line.includes('docs/design.md') && !SPEC_SECTION.test(line)) {
    return 'cites a section without naming its document: write "docs/design.md §N" on the same line';
  }
  return null;
}

function trackedFiles(): string[] {
  const out = execFileSync('git', ['ls-files', '-z', '--', ...CHECKED], { cwd: ROOT, encoding: 'utf8' });
  return out.split('\0').filter((f) => f !== '');
}

describe('nothing points outside the repository', () => {
  it('flags the outside documents, and bare section numbers in src/', () => {
    expect(outsideReference('src/x.ts', '// rule 6 (product.md section 3)')).not.toBeNull();
    expect(outsideReference('README.md', 'as `service-facts.md` reports')).not.toBeNull();
    expect(outsideReference('test/x.ts', "new URL('../../shared/data/x.txt')")).not.toBeNull();
    expect(outsideReference('scripts/derive-phone-zones.ts', '// read ../shared/data here too')).not.toBeNull();
    expect(outsideReference('src/x.ts', '// Section 11: the person’s zones')).not.toBeNull();
    expect(outsideReference('src/x.ts', '/** the dialing rules (§3) */')).not.toBeNull();
    expect(outsideReference('src/x.ts', '// Who may be called (docs/design.md §11): the person’s zones')).toBeNull();
    expect(outsideReference('src/x.ts', '/** Every call status the spec lists (spec section 3). */')).toBeNull();
    expect(outsideReference('src/x.ts', "example: 'Tex. Bus. & Com. Code § 301.051'")).toBeNull();
    expect(outsideReference('test/x.ts', "describe('section 3: webhook moves')")).toBeNull(); // only src/ is held to section citations
    expect(outsideReference(ALLOWED[0]!.file, ALLOWED[0]!.line)).toBeNull();
  });

  it('holds for every tracked file under src, test, bench, scripts, migrations, deploy, docs, config and README.md', () => {
    const files = trackedFiles();
    expect(files).toContain('src/main.ts'); // the listing really read the repository
    const problems: string[] = [];
    for (const file of files.filter((f) => f !== SELF)) {
      const abs = path.join(ROOT, file);
      if (!fs.existsSync(abs)) continue; // deleted in the work tree, not yet committed
      const text = fs.readFileSync(abs);
      if (text.includes(0)) continue; // binary (the dashboard screenshot)
      text
        .toString('utf8')
        .split('\n')
        .forEach((line, i) => {
          const problem = outsideReference(file, line);
          if (problem) problems.push(`${file}:${i + 1}: ${problem}: ${line.trim().slice(0, 120)}`);
        });
    }
    expect(problems).toEqual([]);
  });

  it('every "docs/design.md §N" cited resolves to a numbered section of docs/design.md', () => {
    const design = fs.readFileSync(path.join(ROOT, 'docs/design.md'), 'utf8');
    const sections = new Set([...design.matchAll(/^#{2,3} (\d+(?:\.\d+)?)\.? /gm)].map((m) => m[1]));
    expect(sections).toContain('11');
    const cited = new Map<string, string>();
    for (const file of trackedFiles()) {
      const abs = path.join(ROOT, file);
      if (!fs.existsSync(abs) || file === SELF) continue;
      for (const m of fs.readFileSync(abs, 'utf8').matchAll(/docs\/design\.md\)? §(\d+(?:\.\d+)?)/g)) cited.set(m[1]!, file);
    }
    expect(cited.size).toBeGreaterThan(5);
    expect([...cited].filter(([n]) => !sections.has(n)).map(([n, file]) => `§${n} (${file})`)).toEqual([]);
  });

  it('keeps its allowed lines real: each is still in its file (remove the entry otherwise)', () => {
    for (const { file, line } of ALLOWED) {
      expect(fs.readFileSync(path.join(ROOT, file), 'utf8').split('\n'), file).toContain(line);
    }
  });
});
