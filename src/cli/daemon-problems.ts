import { formatProblem } from '../config/format.js';
import type { ConfigProblem } from '../config/types.js';
import { CliError, EXIT, type CliIo } from './io.js';

// Kept apart from the config loader: `status` reads the daemon file alone and must not load
// the campaign checker (and the phone metadata and calendars it needs) to report its errors.

/**
 * The daemon file's errors (those `campaignd run` refuses to start with) for a command that
 * goes on anyway: each is printed on stderr as a warning. An error in the database fields
 * is refused instead: the store they name cannot be trusted to be the daemon's. The
 * checker's warnings stay for `validate` to show.
 */
export function warnDaemonProblems(problems: readonly ConfigProblem[], io: Pick<CliIo, 'stderr' | 'cwd'>): void {
  const errors = problems.filter((p) => p.severity === 'error');
  const database = errors.find((p) => p.field === 'database' || p.field?.startsWith('database_'));
  if (database) throw new CliError(`${formatProblem(database, io.cwd)} ("campaignd validate" lists every problem)`, EXIT.usage);
  for (const p of errors) io.stderr.write(`warning: ${formatProblem(p, io.cwd)} ("campaignd run" refuses to start until this is fixed)\n`);
}
