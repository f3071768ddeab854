// Collects every problem of one file with its position, so rules never stop at the first one.
import type { ConfigProblem } from './types.js';
import { formatPath, type FieldPath, type ParsedSource } from './source.js';

export interface ProblemOptions {
  hint?: string;
  /** Point at the key instead of the value (unknown keys, missing children). */
  at?: 'key' | 'value';
}

/** A problem collector bound to one file and its parsed source. */
export class ProblemSink {
  readonly problems: ConfigProblem[] = [];

  constructor(
    readonly file: string,
    private readonly source?: Pick<ParsedSource, 'locate'>,
  ) {}

  /** Record an error at `path` (an empty path means the whole file). */
  error(path: FieldPath, message: string, options: ProblemOptions = {}): void {
    this.add('error', path, message, options);
  }

  /** Record a warning at `path`: reported, but it stops nothing. */
  warning(path: FieldPath, message: string, options: ProblemOptions = {}): void {
    this.add('warning', path, message, options);
  }

  /** Whether any error was recorded. */
  get hasErrors(): boolean {
    return this.problems.some((p) => p.severity === 'error');
  }

  private add(severity: ConfigProblem['severity'], path: FieldPath, message: string, options: ProblemOptions): void {
    const position = path.length > 0 ? this.source?.locate(path, options.at ?? 'value') : undefined;
    const problem: ConfigProblem = { file: this.file, message, severity };
    if (position) {
      problem.line = position.line;
      problem.column = position.column;
    }
    if (path.length > 0) problem.field = formatPath(path);
    if (options.hint) problem.hint = options.hint;
    this.problems.push(problem);
  }
}

/** Problems in file order: by line, those without a line first; stable otherwise. */
export function sortByPosition(problems: ConfigProblem[]): ConfigProblem[] {
  return problems
    .map((p, i) => ({ p, i }))
    .sort((a, b) => (a.p.line ?? 0) - (b.p.line ?? 0) || (a.p.column ?? 0) - (b.p.column ?? 0) || a.i - b.i)
    .map(({ p }) => p);
}

/** Whether a list of problems holds at least one error. */
export function hasErrors(problems: readonly ConfigProblem[]): boolean {
  return problems.some((p) => p.severity === 'error');
}

/** A short, safe description of a written value for messages. */
export function describe(value: unknown): string {
  if (value === null || value === undefined) return 'empty';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  if (typeof value === 'string') {
    const text = value.length > 40 ? `${value.slice(0, 37)}...` : value;
    return JSON.stringify(text);
  }
  return String(value);
}
