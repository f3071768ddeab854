import type { LeadItem } from '../leads/lead-items.js';

// A POST of 10,000 leads validated item by item through zod took more of the daemon's time
// than anything else of the request (bench/RESULTS.md, bulk leads on PostgreSQL): this plain
// check of the same rules runs first. It only ever says yes to a body the route's schema
// (routes/leads.ts, LeadItemSchema) accepts as it is (that schema transforms nothing); for
// anything else it says no and the schema judges, so every refusal is still the schema's,
// with its errors. Keep the two in step: test/unit/api-lead-items-check.test.ts compares
// them on generated bodies.

/** The limits of LeadItemSchema. */
const PHONE_MAX = 64;
const EXTERNAL_ID_MAX = 200;
const VARIABLE_NAME_MAX = 200;
const SECONDARY_MAX = 20;
const TIMEZONE_MAX = 64;
const COUNTRY_MAX = 8;

const ITEM_KEYS = new Set(['phone_number', 'external_id', 'variables', 'secondary_phone_numbers', 'timezone', 'country']);

/** True only when `value` is one lead item, or an array of 1..maxItems, that the schema takes unchanged. */
export function plainLeadItems(value: unknown, maxItems: number): value is LeadItem | LeadItem[] {
  if (!Array.isArray(value)) return isPlainItem(value);
  if (value.length < 1 || value.length > maxItems) return false;
  for (let i = 0; i < value.length; i++) if (!isPlainItem(value[i])) return false;
  return true;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

function shortString(value: unknown, max: number, min = 0): boolean {
  return typeof value === 'string' && value.length >= min && value.length <= max;
}

function isPlainItem(item: unknown): boolean {
  if (!isPlainObject(item)) return false;
  for (const key in item) if (!ITEM_KEYS.has(key)) return false;
  // `for in` skips nothing JSON.parse makes, but an own "__proto__" key is left to the schema.
  if (Object.hasOwn(item, '__proto__')) return false;
  if (!shortString(item.phone_number, PHONE_MAX)) return false;
  if (item.external_id !== undefined && !shortString(item.external_id, EXTERNAL_ID_MAX, 1)) return false;
  if (item.timezone !== undefined && !shortString(item.timezone, TIMEZONE_MAX)) return false;
  if (item.country !== undefined && !shortString(item.country, COUNTRY_MAX)) return false;
  const secondary = item.secondary_phone_numbers;
  if (secondary !== undefined) {
    if (!Array.isArray(secondary) || secondary.length > SECONDARY_MAX) return false;
    for (const n of secondary) if (!shortString(n, PHONE_MAX)) return false;
  }
  const variables = item.variables;
  if (variables !== undefined) {
    if (!isPlainObject(variables) || Object.hasOwn(variables, '__proto__')) return false;
    for (const name in variables) {
      if (name.length < 1 || name.length > VARIABLE_NAME_MAX) return false;
      const v = variables[name];
      if (typeof v === 'string' || typeof v === 'boolean') continue;
      if (typeof v !== 'number' || !Number.isFinite(v)) return false;
    }
  }
  return true;
}
