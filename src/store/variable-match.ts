// Whether a call's extracted variables say a given thing (opt_out, success_when): the named
// variable's value compared with the listed values as trimmed, case-insensitive text.
// Objects and lists never match: they are no answer a person would write in the file.

export interface VariableRule {
  variable: string;
  values: readonly string[];
}

export function variableSays(rule: VariableRule | undefined, variables: unknown): boolean {
  if (!rule || variables === null || typeof variables !== 'object' || Array.isArray(variables)) return false;
  const value = (variables as Record<string, unknown>)[rule.variable];
  if (value === undefined || value === null || typeof value === 'object') return false;
  const text = String(value).trim().toLowerCase();
  return rule.values.some((v) => v.trim().toLowerCase() === text);
}
