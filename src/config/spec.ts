// A small declarative description of config fields. One table per file kind drives three
// things that must never disagree: the checker (with positions and hints), the defaults, and
// the JSON Schema that editors use for completion (see json-schema.ts).
import { IANAZone } from 'luxon';
import { didYouMean } from './suggest.js';
import type { FieldPath } from './source.js';
import { describe, type ProblemSink } from './problems.js';
import { checkUrl, parseListen } from './address.js';
import { DURATION_FORMS, parseDuration } from './duration.js';

export type Spec =
  | { kind: 'integer'; min?: number; max?: number }
  /** An amount of money in the service's currency: a number, decimals allowed. */
  | { kind: 'amount'; min?: number; max?: number }
  /** Seconds, written as a whole number or with a unit ("1h", "90m"): see duration.ts. */
  | { kind: 'duration'; min?: number; max?: number }
  | { kind: 'boolean' }
  | { kind: 'string'; pattern?: RegExp; patternHint?: string; noun?: string }
  | { kind: 'enum'; values: readonly string[]; aliases?: Readonly<Record<string, string>>; noun?: string }
  | { kind: 'time' }
  | { kind: 'zone' }
  | { kind: 'date' }
  /**
   * An ISO 3166 alpha-2 code the phone library knows. The check comes with the spec (the
   * campaign file's, which imports the library anyway for lead numbers) so that this module
   * does not load libphonenumber's metadata: the daemon file is parsed by `campaignd status`
   * too, whose start-up counts (issue 11).
   */
  | { kind: 'country'; isSupported: (code: string) => boolean }
  | { kind: 'url' }
  | { kind: 'path' }
  | { kind: 'listen' }
  | { kind: 'env-name' }
  | { kind: 'list'; item: Spec; minItems?: number }
  /** A mapping whose keys the user chooses (e.g. variable names), each value checked against `value`. */
  | { kind: 'map'; value: Spec; noun: string }
  | { kind: 'object'; fields: Readonly<Record<string, Field>>; exactlyOneOf?: readonly string[]; extraKeys?: readonly string[] }
  /** Either a word (`text`) or a mapping (`object`), e.g. `then: complete` or `then: { retry_in: 2h }`. */
  | { kind: 'either'; text: Extract<Spec, { kind: 'enum' }>; object: Extract<Spec, { kind: 'object' }> }
  /** A key that must never be written (e.g. a token in YAML); its value is never echoed. */
  | { kind: 'forbidden'; message: string; hint: string };

export interface Field {
  spec: Spec;
  description: string;
  required?: boolean;
  /** Filled in when the field is absent (before paths are resolved). */
  default?: unknown;
  example?: unknown;
}

export { describe };

export const TIME_PATTERN = /^([01]?\d|2[0-3]):([0-5]\d)(?::([0-5]\d))?$/;
export const DATE_PATTERN = /^(\d{4})-(\d{2})-(\d{2})$/;

/** "HH:MM" or "HH:MM:SS" → seconds after midnight, or undefined when it is not a time. */
export function parseTimeOfDay(text: string): number | undefined {
  const m = TIME_PATTERN.exec(text.trim());
  if (!m) return undefined;
  return Number(m[1]) * 3600 + Number(m[2]) * 60 + Number(m[3] ?? 0);
}

/** Whether `text` is a real calendar date written YYYY-MM-DD. */
export function isRealDate(text: string): boolean {
  const m = DATE_PATTERN.exec(text);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const date = new Date(Date.UTC(y, mo - 1, d));
  return date.getUTCFullYear() === y && date.getUTCMonth() === mo - 1 && date.getUTCDate() === d;
}

let zoneNames: readonly string[] | undefined;
function knownZones(): readonly string[] {
  zoneNames ??= Intl.supportedValuesOf('timeZone');
  return zoneNames;
}

function suggestion(input: string, candidates: readonly string[]): string {
  const guess = didYouMean(input, candidates);
  return guess ? ` (did you mean "${guess}"?)` : '';
}

/** Check `value` against `spec`, report every problem to `sink`, and return the normalised value (undefined when invalid). */
export function checkValue(spec: Spec, value: unknown, path: FieldPath, sink: ProblemSink): unknown {
  switch (spec.kind) {
    case 'integer': {
      const range = rangeText(spec.min, spec.max);
      if (typeof value !== 'number' || !Number.isFinite(value)) {
        const quoted = typeof value === 'string' && /^-?\d+$/.test(value.trim());
        sink.error(path, `must be a whole number, not ${describe(value)}`, { hint: quoted ? 'remove the quotes' : `use a whole number ${range}` });
        return undefined;
      }
      if (!Number.isInteger(value)) {
        sink.error(path, `${value} is not a whole number`, { hint: `use a whole number ${range}` });
        return undefined;
      }
      if ((spec.min !== undefined && value < spec.min) || (spec.max !== undefined && value > spec.max)) {
        sink.error(path, `${value} is out of range`, { hint: `use a whole number ${range}` });
        return undefined;
      }
      return value;
    }
    case 'amount': {
      const range = rangeText(spec.min, spec.max);
      if (typeof value !== 'number' || !Number.isFinite(value)) {
        const quoted = typeof value === 'string' && /^-?\d+(\.\d+)?$/.test(value.trim());
        sink.error(path, `must be a number, not ${describe(value)}`, { hint: quoted ? 'remove the quotes' : `use a number ${range}, e.g. 250.00` });
        return undefined;
      }
      if ((spec.min !== undefined && value < spec.min) || (spec.max !== undefined && value > spec.max)) {
        sink.error(path, `${value} is out of range`, { hint: `use a number ${range}` });
        return undefined;
      }
      return value;
    }
    case 'duration':
      return checkDuration(spec, value, path, sink);
    case 'boolean':
      if (typeof value !== 'boolean') {
        sink.error(path, `must be true or false, not ${describe(value)}`, { hint: 'write true or false, without quotes' });
        return undefined;
      }
      return value;
    case 'forbidden':
      sink.error(path, spec.message, { hint: spec.hint, at: 'key' });
      return undefined;
    case 'list':
      return checkList(spec, value, path, sink);
    case 'map': {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) {
        sink.error(path, `must be a mapping of ${spec.noun}, not ${describe(value)}`, { hint: 'write NAME: VALUE pairs, e.g. { first_name: "Vorname" }' });
        return undefined;
      }
      const out: Record<string, unknown> = {};
      for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
        const checked = checkValue(spec.value, item, [...path, key], sink);
        if (checked !== undefined) out[key] = checked;
      }
      return out;
    }
    case 'object':
      return checkObject(spec, value, path, sink);
    case 'either':
      return typeof value === 'string' ? checkValue(spec.text, value, path, sink) : checkObject(spec.object, value, path, sink);
    default:
      return checkText(spec, value, path, sink);
  }
}

function checkDuration(spec: Extract<Spec, { kind: 'duration' }>, value: unknown, path: FieldPath, sink: ProblemSink): number | undefined {
  const hint = `write ${DURATION_FORMS}${spec.min !== undefined || spec.max !== undefined ? `, ${rangeText(spec.min, spec.max)} seconds` : ''}`;
  let seconds: number | undefined;
  if (typeof value === 'number' && Number.isFinite(value)) {
    if (!Number.isInteger(value)) {
      sink.error(path, `${value} is not a whole number of seconds`, { hint });
      return undefined;
    }
    seconds = value;
  } else if (typeof value === 'string') {
    seconds = parseDuration(value);
    if (seconds === undefined) {
      sink.error(path, `${describe(value)} is not a duration`, { hint });
      return undefined;
    }
  } else {
    sink.error(path, `must be a duration in seconds, not ${describe(value)}`, { hint });
    return undefined;
  }
  if ((spec.min !== undefined && seconds < spec.min) || (spec.max !== undefined && seconds > spec.max)) {
    sink.error(path, `${seconds} seconds is out of range`, { hint });
    return undefined;
  }
  return seconds;
}

function rangeText(min?: number, max?: number): string {
  if (min !== undefined && max !== undefined) return `from ${min} to ${max}`;
  if (min !== undefined) return `of at least ${min}`;
  if (max !== undefined) return `of at most ${max}`;
  return '';
}

type TextSpec = Exclude<Spec, { kind: 'integer' | 'amount' | 'duration' | 'boolean' | 'forbidden' | 'list' | 'object' | 'map' | 'either' }>;

function checkText(spec: TextSpec, value: unknown, path: FieldPath, sink: ProblemSink): unknown {
  if (typeof value !== 'string' || value.trim() === '') {
    const hint = spec.kind === 'time' ? 'write a quoted 24-hour time such as "09:00:00"' : spec.kind === 'date' ? 'write YYYY-MM-DD, e.g. 2026-12-24' : undefined;
    sink.error(path, `must be ${textKindName(spec)}, not ${describe(value)}`, hint ? { hint } : {});
    return undefined;
  }
  const text = value.trim();
  switch (spec.kind) {
    case 'string':
      if (spec.pattern && !spec.pattern.test(text)) {
        sink.error(path, `${describe(text)} is not ${spec.noun ? `a valid ${spec.noun}` : 'allowed here'}`, spec.patternHint ? { hint: spec.patternHint } : {});
        return undefined;
      }
      return text;
    case 'enum': {
      const lower = text.toLowerCase();
      const found = spec.values.find((v) => v === lower) ?? spec.aliases?.[lower];
      if (found) return found;
      sink.error(path, `${describe(text)} is not ${spec.noun ? `a ${spec.noun}` : 'an allowed value'}${suggestion(lower, spec.values)}`, { hint: `use one of ${spec.values.join(', ')}` });
      return undefined;
    }
    case 'time': {
      const seconds = parseTimeOfDay(text);
      if (seconds === undefined) {
        sink.error(path, `${describe(text)} is not a time of day`, { hint: 'write "HH:MM" or "HH:MM:SS" in 24-hour form, from "00:00" to "23:59:59"' });
      }
      return seconds;
    }
    case 'zone':
      if (!IANAZone.isValidZone(text)) {
        sink.error(path, `${describe(text)} is not an IANA time zone${suggestion(text, knownZones())}`, { hint: 'use a name such as Europe/Berlin, America/New_York or UTC' });
        return undefined;
      }
      return text;
    case 'date':
      if (!isRealDate(text)) {
        sink.error(path, `${describe(text)} is not a real date`, { hint: 'write YYYY-MM-DD, e.g. 2026-12-24' });
        return undefined;
      }
      return text;
    case 'country': {
      const upper = text.toUpperCase();
      if (!/^[A-Z]{2}$/.test(upper) || !spec.isSupported(upper)) {
        sink.error(path, `${describe(text)} is not a two-letter country code`, { hint: 'use an ISO 3166 alpha-2 code such as US, DE or GB' });
        return undefined;
      }
      return upper;
    }
    case 'url':
      return checkUrl(text, path, sink);
    case 'path':
      return text;
    case 'listen':
      return parseListen(text, path, sink);
    case 'env-name':
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(text)) {
        sink.error(path, `${describe(text)} is not an environment variable name`, { hint: 'use letters, digits and underscores, e.g. CAMPAIGND_WEBHOOK_SECRET' });
        return undefined;
      }
      return text;
  }
}

function textKindName(spec: TextSpec): string {
  const names: Record<TextSpec['kind'], string> = {
    string: 'a text',
    enum: `one of ${spec.kind === 'enum' ? spec.values.join(', ') : ''}`,
    time: 'a quoted time "HH:MM:SS"',
    zone: 'an IANA time zone name',
    date: 'a date YYYY-MM-DD',
    country: 'a two-letter country code',
    url: 'an http(s) URL',
    path: 'a file path',
    listen: 'host:port',
    'env-name': 'an environment variable name',
  };
  return names[spec.kind];
}

function checkList(spec: Extract<Spec, { kind: 'list' }>, value: unknown, path: FieldPath, sink: ProblemSink): unknown[] | undefined {
  if (!Array.isArray(value)) {
    sink.error(path, `must be a list, not ${describe(value)}`, { hint: 'write a list, e.g. [a, b] or one "- item" per line' });
    return undefined;
  }
  if (spec.minItems !== undefined && value.length < spec.minItems) {
    sink.error(path, 'must not be empty', { hint: `list at least ${spec.minItems} item${spec.minItems === 1 ? '' : 's'}` });
    return undefined;
  }
  const out: unknown[] = [];
  let ok = true;
  value.forEach((item, i) => {
    const checked = checkValue(spec.item, item, [...path, i], sink);
    if (checked === undefined) ok = false;
    else out.push(checked);
  });
  return out;
}

function checkObject(spec: Extract<Spec, { kind: 'object' }>, value: unknown, path: FieldPath, sink: ProblemSink): Record<string, unknown> | undefined {
  // The result is partial when a field is bad: the daemon file still yields a best-effort
  // config, and callers decide by the sink's errors.
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    sink.error(path, `must be a mapping of fields, not ${describe(value)}`, { hint: `fields: ${Object.keys(spec.fields).join(', ')}` });
    return undefined;
  }
  const written = value as Record<string, unknown>;
  const names = Object.keys(spec.fields).filter((k) => spec.fields[k]?.spec.kind !== 'forbidden');
  const out: Record<string, unknown> = {};
  // A misspelt required field is reported once, as the misspelling, not again as missing.
  const misspelt = new Set<string>();
  for (const key of Object.keys(written)) {
    const field = spec.fields[key];
    if (field) continue;
    if (spec.extraKeys?.includes(key)) continue;
    const guess = didYouMean(key, names);
    if (guess && !Object.hasOwn(written, guess)) misspelt.add(guess);
    sink.error([...path, key], `unknown field "${key}"${guess ? ` (did you mean "${guess}"?)` : ''}`, {
      at: 'key',
      hint: guess ? `rename it to ${guess}` : `known fields: ${names.join(', ')}`,
    });
  }
  // First: which of two alternative fields a file must give (assistant_id or assistants) is
  // what a person fixes first, before the fields that merely have no value.
  if (spec.exactlyOneOf) {
    const given = spec.exactlyOneOf.filter((k) => written[k] !== undefined && written[k] !== null);
    if (given.length !== 1) {
      const message = given.length === 0 ? `needs one of ${spec.exactlyOneOf.join(' or ')}` : `sets both ${given.join(' and ')}`;
      // At the file's root there is no key to point at: name the field to add, or the second one given.
      const at = path.length > 0 ? path : [given[1] ?? spec.exactlyOneOf[0]!];
      sink.error(at, message, { at: 'key', hint: `give exactly one of ${spec.exactlyOneOf.join(', ')}` });
    }
  }
  for (const [key, field] of Object.entries(spec.fields)) {
    const present = Object.hasOwn(written, key) && written[key] !== null && written[key] !== undefined;
    if (!present) {
      if (Object.hasOwn(written, key) && field.spec.kind === 'forbidden') checkValue(field.spec, null, [...path, key], sink);
      if (field.required && !misspelt.has(key)) {
        const example = field.example === undefined ? '' : `, e.g. ${key}: ${JSON.stringify(field.example)}`;
        sink.error([...path, key], `missing required field "${key}"`, { at: 'key', hint: `add ${key}${example}` });
      } else if (field.default !== undefined) {
        // Defaults are written-form values: normalise them the same way (a sub-mapping fills its own defaults).
        out[key] = checkValue(field.spec, field.default, [...path, key], sink);
      }
      continue;
    }
    const checked = checkValue(field.spec, written[key], [...path, key], sink);
    if (checked !== undefined) out[key] = checked;
  }
  return out;
}
