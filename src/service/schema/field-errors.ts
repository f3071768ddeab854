import type { z } from 'zod';

/**
 * Turns zod issues into the service's validation body shape `{field: [message]}` with
 * Laravel-like wording ("The assistant name field is required."), the field path joined
 * with dots (`headers.0.name`). Issues on the body itself go under `body`.
 */
export function fieldErrors(error: z.ZodError): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const issue of error.issues) {
    const field = issue.path.length === 0 ? 'body' : issue.path.map(String).join('.');
    const list = (out[field] ??= []);
    const message = describe(issue, field);
    if (!list.includes(message)) list.push(message);
  }
  return out;
}

/** Laravel-style message for one issue. */
function describe(issue: z.core.$ZodIssue, field: string): string {
  const attr = field.includes('.') ? field : field.replace(/_/g, ' ');
  const the = `The ${attr} field`;
  const own = issue.message;
  if (own.startsWith('The ')) return own;
  if (own.startsWith('must ') || own.startsWith('may ')) return `${the} ${own}.`;
  switch (issue.code) {
    case 'invalid_type':
      if (/received undefined$/.test(own)) return `${the} is required.`;
      return `${the} must be ${typeWord(issue.expected)}.`;
    case 'too_small':
      return issue.origin === 'string'
        ? `${the} must be at least ${String(issue.minimum)} characters.`
        : issue.origin === 'array'
          ? `${the} must have at least ${String(issue.minimum)} items.`
          : `${the} must be at least ${String(issue.minimum)}.`;
    case 'too_big':
      return issue.origin === 'string'
        ? `${the} must not be greater than ${String(issue.maximum)} characters.`
        : issue.origin === 'array'
          ? `${the} must not have more than ${String(issue.maximum)} items.`
          : `${the} must not be greater than ${String(issue.maximum)}.`;
    case 'invalid_value':
      return `The selected ${attr} is invalid.`;
    case 'invalid_format':
      return issue.format === 'url' ? `${the} must be a valid URL.` : `${the} format is invalid.`;
    case 'unrecognized_keys':
      return `${the} has unknown keys: ${issue.keys.join(', ')}.`;
    default:
      return `${the} is invalid.`;
  }
}

/** English article + type name of an expected zod type. */
function typeWord(expected: string): string {
  switch (expected) {
    case 'int':
      return 'an integer';
    case 'number':
      return 'a number';
    case 'boolean':
      return 'true or false';
    case 'array':
    case 'tuple':
      return 'an array';
    case 'object':
    case 'record':
      return 'an object';
    default:
      return `a ${expected}`;
  }
}
