// `on_result` as written → ResultRule[], with the checks one campaign file can make on its
// own: a rule needs a condition, a variable needs exactly one comparison, a pattern must
// compile, and (when the campaign declares extracted_variables) the names must be known.
// Rules spanning files (move_to targets, cycles) are in on-result-links.ts.
import type { ProblemSink } from './problems.js';
import type { ResultAction, ResultRule } from './result-rule-types.js';
import { didYouMean } from './suggest.js';

interface WrittenRule {
  when?: { status?: string[]; answered_by?: string[]; variable?: string; equals?: string; in?: string[]; matches?: string };
  then?: string | { retry_in?: number; move_to?: string };
}

const COMPARISONS = ['equals', 'in', 'matches'] as const;

/** The checked rules, or undefined when the field is absent; problems go to `sink`. */
export function readOnResult(written: Record<string, unknown>, sink: ProblemSink): ResultRule[] | undefined {
  const list = written.on_result as WrittenRule[] | undefined;
  if (list === undefined) return undefined;
  const declared = written.extracted_variables as string[] | undefined;
  const rules: ResultRule[] = [];
  list.forEach((rule, i) => {
    const read = readRule(rule, i, declared, sink);
    if (read) rules.push(read);
  });
  return rules;
}

function readRule(rule: WrittenRule, i: number, declared: string[] | undefined, sink: ProblemSink): ResultRule | undefined {
  const when = rule.when;
  const then = action(rule.then);
  if (!when || !then) return undefined;
  const at = ['on_result', i, 'when'];
  const out: ResultRule = { position: i + 1, then };
  if (when.status) out.status = when.status.map((s) => s.toLowerCase());
  if (when.answered_by) out.answeredBy = when.answered_by.map((s) => s.toLowerCase());
  const given = COMPARISONS.filter((k) => when[k] !== undefined);
  if (when.variable === undefined) {
    if (given.length > 0) sink.error([...at, given[0]!], `compares a variable, but the rule names none`, { at: 'key', hint: 'add variable: NAME (the extracted variable to compare)' });
    if (!out.status && !out.answeredBy && given.length === 0) {
      sink.error(at, 'has no condition, so it would match every call', { at: 'key', hint: 'give status, answered_by, or variable with equals, in or matches' });
    }
    return out;
  }
  if (given.length !== 1) {
    const message = given.length === 0 ? `names variable "${when.variable}" but no comparison` : `sets ${given.join(' and ')} together`;
    sink.error(at, message, { at: 'key', hint: 'give exactly one of equals, in or matches' });
    return undefined;
  }
  if (when.matches !== undefined && !compiles(when.matches)) {
    sink.error([...at, 'matches'], `${JSON.stringify(when.matches)} is not a regular expression`, { hint: 'write a JavaScript regular expression without slashes, e.g. "^wrong"' });
    return undefined;
  }
  if (declared && !declared.includes(when.variable)) {
    const guess = didYouMean(when.variable, declared);
    sink.warning([...at, 'variable'], `"${when.variable}" is not one of extracted_variables, so this rule may never match`, {
      hint: guess ? `did you mean "${guess}"?` : `use one of ${declared.join(', ')}, or add it to extracted_variables`,
    });
  }
  out.variable = { name: when.variable };
  if (when.equals !== undefined) out.variable.equals = when.equals;
  if (when.in !== undefined) out.variable.in = when.in;
  if (when.matches !== undefined) out.variable.matches = when.matches;
  return out;
}

function action(then: WrittenRule['then']): ResultAction | undefined {
  if (then === undefined) return undefined;
  if (typeof then === 'string') return { kind: then as 'complete' | 'suppress' | 'invalid' };
  if (then.retry_in !== undefined) return { kind: 'retry-in', seconds: then.retry_in };
  if (then.move_to !== undefined) return { kind: 'move-to', campaign: then.move_to };
  return undefined;
}

function compiles(pattern: string): boolean {
  try {
    new RegExp(pattern, 'i');
    return true;
  } catch {
    return false;
  }
}
