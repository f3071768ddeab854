import { z } from 'zod';
import { IANAZone } from 'luxon';

/**
 * Field builders for request validation. They accept what a Laravel backend accepts
 * (numeric strings for integers and numbers; 1/0 for booleans) so the simulator is no
 * stricter than the live service, while the output is typed precisely for the client.
 */

const INT_TEXT = /^-?\d+$/;
const NUM_TEXT = /^-?\d+(\.\d+)?$/;

/** An integer (or integer string) within optional bounds. */
export function intField(min?: number, max?: number) {
  let n = z.int();
  if (min !== undefined) n = n.min(min);
  if (max !== undefined) n = n.max(max);
  return z.preprocess((v) => (typeof v === 'string' && INT_TEXT.test(v.trim()) ? Number(v) : v), n);
}

/** A number (or numeric string) within optional bounds. */
export function numField(min?: number, max?: number) {
  let n = z.number();
  if (min !== undefined) n = n.min(min);
  if (max !== undefined) n = n.max(max);
  return z.preprocess((v) => (typeof v === 'string' && NUM_TEXT.test(v.trim()) ? Number(v) : v), n);
}

/** A boolean; 1/0 and "1"/"0"/"true"/"false" are accepted as Laravel does. */
export function boolField() {
  return z.preprocess((v) => {
    if (v === 1 || v === '1' || v === 'true') return true;
    if (v === 0 || v === '0' || v === 'false') return false;
    return v;
  }, z.boolean());
}

/** A string with an optional maximum length. */
export function strField(max?: number) {
  return max === undefined ? z.string() : z.string().max(max);
}

/** An http(s) URL. */
export function urlField() {
  return z.url({
    protocol: /^https?$/,
    error: (iss) => (iss.code === 'invalid_format' ? 'must be a valid URL' : undefined),
  });
}

/** An IANA timezone identifier, checked against the runtime's zone database. */
export function timezoneField() {
  return z.string().refine((v) => IANAZone.isValidZone(v), { error: 'must be a valid timezone' });
}

/** A `YYYY-MM-DD` calendar date that exists. */
export function dateField() {
  return z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}$/, { error: 'must match the format Y-m-d' })
    .refine((v) => {
      const d = new Date(`${v}T00:00:00Z`);
      return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === v;
    }, { error: 'must be a valid date' });
}

/** A key/value object; `[]` (how PHP clients send an empty map) is accepted as `{}`. */
export function objectField() {
  return z.preprocess(
    (v) => (Array.isArray(v) && v.length === 0 ? {} : v),
    z.record(z.string(), z.unknown()),
  );
}
