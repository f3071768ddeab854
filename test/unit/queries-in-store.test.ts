// The store owns every query (issue 22): kysely query builders and raw SQL run in src/store/
// (and migrations/) only; other folders call store functions that take the database first.
// So the differences between SQLite and PostgreSQL live in src/store/ alone, and a reader
// looking for what touches a table reads one folder.
//
// The scan reads the syntax tree (the TypeScript compiler's parser), so a query quoted in a
// comment or a string is not a query, and `sql` used as a tag or an object is one however it
// is spaced or typed.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SRC = path.join(ROOT, 'src');

/** The folder where queries live. */
const STORE = 'src/store/';

/** Methods that start a query on a kysely instance or transaction (or run a compiled one). */
const QUERY_METHODS = new Set(['selectFrom', 'selectNoFrom', 'insertInto', 'replaceInto', 'updateTable', 'deleteFrom', 'mergeInto', 'executeQuery']);
/** Methods that start a common table expression: `db.with('name', …)` (a string first, unlike Array#with). */
const CTE_METHODS = new Set(['with', 'withRecursive', 'withMaterialized', 'withNotMaterialized']);

/** One line per query found in `text`: "file:line: what". */
function queriesIn(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: string[] = [];
  const at = (node: ts.Node, what: string) => found.push(`${file}:${source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1}: ${what}`);
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier) && node.moduleSpecifier.text === 'kysely') {
      // Types (Kysely, Transaction, row types) may travel; values (sql, CompiledQuery, helpers) build queries.
      const clause = node.importClause;
      const values = clause && !clause.isTypeOnly ? [...(clause.name ? [clause.name.text] : []), ...(clause.namedBindings && ts.isNamedImports(clause.namedBindings) ? clause.namedBindings.elements.filter((e) => !e.isTypeOnly).map((e) => e.name.text) : []), ...(clause.namedBindings && ts.isNamespaceImport(clause.namedBindings) ? [clause.namedBindings.name.text] : [])] : [];
      if (values.length > 0) at(node, `imports ${values.join(', ')} from kysely`);
    }
    if (ts.isTaggedTemplateExpression(node) && ts.isIdentifier(node.tag) && node.tag.text === 'sql') at(node, 'sql`…`');
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression)) {
      const { name, expression: target } = node.expression;
      if (QUERY_METHODS.has(name.text)) at(node, `.${name.text}(…)`);
      else if (CTE_METHODS.has(name.text) && node.arguments[0] && ts.isStringLiteralLike(node.arguments[0])) at(node, `.${name.text}(…)`);
      else if (ts.isIdentifier(target) && target.text === 'sql') at(node, `sql.${name.text}(…)`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('queries live in src/store/', () => {
  it('finds query builders and raw SQL, not their names in comments or strings', () => {
    const text = [
      "import { sql, type Kysely } from 'kysely';",
      "import type { Transaction } from 'kysely';",
      '// db.selectFrom("leads") in a comment is not a query, nor sql`select 1`',
      "const s = \"db.deleteFrom('x')\";",
      "await db.selectFrom('leads').selectAll().execute();",
      'await trx',
      "  .updateTable('leads').set({ a: 1 }).execute();",
      "const n = sql<number>`count(*)`;",
      'const list = sql.join(parts);',
      "const q = db.with('recent', (d) => d.selectFrom('x'));",
      'const copy = [1, 2].with(0, 3);',
    ].join('\n');
    expect(queriesIn('x.ts', text)).toEqual([
      'x.ts:1: imports sql from kysely',
      'x.ts:5: .selectFrom(…)',
      'x.ts:6: .updateTable(…)',
      'x.ts:8: sql`…`',
      'x.ts:9: sql.join(…)',
      'x.ts:10: .with(…)',
      'x.ts:10: .selectFrom(…)',
    ]);
  });

  it('src/ outside store/ runs none', () => {
    const found: string[] = [];
    let scanned = 0;
    for (const name of fs.readdirSync(SRC, { recursive: true, encoding: 'utf8' }).sort()) {
      if (!name.endsWith('.ts') || name.endsWith('.d.ts')) continue;
      const file = path.relative(ROOT, path.join(SRC, name)).split(path.sep).join('/');
      scanned++;
      if (file.startsWith(STORE)) continue;
      found.push(...queriesIn(file, fs.readFileSync(path.join(SRC, name), 'utf8')));
    }
    expect(scanned).toBeGreaterThan(50); // the scan found the sources
    expect(found, `queries outside src/store/ (move each into a store function taking the database first):\n${found.join('\n')}`).toEqual([]);
  });
});
