// Problems as compact lines a person can act on:
//   config/campaigns/x.yaml:12:3 allowed_days[2]: "funday" is not one of … (did you mean "sunday"?) — use one of …
import path from 'node:path';
import type { ConfigProblem } from './types.js';

/** One line per problem; file names are shown relative to `cwd` when given and inside it. */
export function formatProblems(problems: readonly ConfigProblem[], options: { cwd?: string } = {}): string {
  return problems.map((p) => formatProblem(p, options.cwd)).join('\n');
}

/** One problem as one line. */
export function formatProblem(p: ConfigProblem, cwd?: string): string {
  let where = displayFile(p.file, cwd);
  if (p.line !== undefined) where += `:${p.line}`;
  if (p.line !== undefined && p.column !== undefined) where += `:${p.column}`;
  const severity = p.severity === 'warning' ? ' warning' : '';
  const field = p.field ? ` ${p.field}` : '';
  const hint = p.hint ? ` — ${p.hint}` : '';
  return `${where}${severity}${field}: ${p.message}${hint}`;
}

/** "2 errors, 1 warning" style counts. */
export function summarizeProblems(problems: readonly ConfigProblem[]): { errors: number; warnings: number; text: string } {
  const errors = problems.filter((p) => p.severity === 'error').length;
  const warnings = problems.length - errors;
  const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;
  return { errors, warnings, text: `${plural(errors, 'error')}, ${plural(warnings, 'warning')}` };
}

function displayFile(file: string, cwd?: string): string {
  if (!cwd || !path.isAbsolute(file)) return file;
  const relative = path.relative(cwd, file);
  return relative && !relative.startsWith('..') && !path.isAbsolute(relative) ? relative : file;
}
