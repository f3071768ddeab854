// Reading one extracted variable of a call, as the webhook (`extracted_variables`) and the
// call list (`variables`, `{}` or `[]`) carry them. Shared by the opt-out rule and the
// rules on the result, so both read a value the same way.

/** The variable's value as trimmed text, or undefined when absent, empty-ish or not a scalar. */
export function extractedText(variables: unknown, name: string): string | undefined {
  if (variables === null || typeof variables !== 'object' || Array.isArray(variables)) return undefined;
  const value = (variables as Record<string, unknown>)[name];
  if (value === undefined || value === null || typeof value === 'object') return undefined;
  return String(value).trim();
}

/** The variables as a plain mapping (an array or anything else reads as none). */
export function extractedMap(variables: unknown): Record<string, unknown> {
  return variables !== null && typeof variables === 'object' && !Array.isArray(variables) ? (variables as Record<string, unknown>) : {};
}
