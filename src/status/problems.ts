import { decodeTokenSource, tokenAdvice } from '../config/token-source.js';
import type { StatusReport } from './types.js';

/**
 * The problems that make `campaignd status` exit 1, as lines a person can act on: a
 * campaign that cannot run, a token the service rejects, a campaign file the daemon
 * could not load. Warnings (problems with severity "warning") do not count.
 */
export function statusProblems(report: StatusReport, options: { includeDaemonProblems?: boolean } = {}): string[] {
  const out: string[] = [];
  if (report.daemon.api === 'token-rejected') {
    // Said once, with what to do for where the daemon reads its token (a file: SIGHUP; a variable: restart).
    out.push(`no working API token: ${report.daemon.api_detail ?? 'the service rejects it'}; ${tokenAdvice(decodeTokenSource(report.daemon.token_source))}`);
  }
  for (const c of report.campaigns) if (c.problem) out.push(`${c.name}: ${c.problem}`);
  if (options.includeDaemonProblems !== false) {
    for (const p of report.daemon.problems) {
      if (isWarning(p)) continue;
      out.push(describeProblem(p));
    }
  }
  return out;
}

/** One line for a stored config problem (a ConfigProblem object, or whatever was stored). */
export function describeProblem(p: unknown): string {
  if (p && typeof p === 'object') {
    const o = p as { file?: unknown; line?: unknown; column?: unknown; field?: unknown; message?: unknown; hint?: unknown };
    if (typeof o.message === 'string') {
      const where = [o.file, o.line, o.column].filter((x) => typeof x === 'string' || typeof x === 'number').join(':');
      const field = typeof o.field === 'string' ? `${o.field}: ` : '';
      const hint = typeof o.hint === 'string' ? ` — ${o.hint}` : '';
      return `${where ? `${where} ` : ''}${field}${o.message}${hint}`;
    }
  }
  return typeof p === 'string' ? p : JSON.stringify(p);
}

function isWarning(p: unknown): boolean {
  return !!p && typeof p === 'object' && (p as { severity?: unknown }).severity === 'warning';
}
