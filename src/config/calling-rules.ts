// A calling_rules file (docs/design.md §11): YAML rules by region, checked with the same
// field table machinery as the config files, so every problem names file, line, field and fix.
//
//   rules:
//     - region: US-TX                       # country (US) or subdivision (US-TX, CA-ON)
//       source: Tex. Bus. & Com. Code § 301.051
//       hours: { start: "09:00", end: "21:00" }        # every day, unless day_hours says otherwise
//       day_hours: { sunday: { start: "12:00", end: "21:00" } }
//       no_calls_on: [sunday]                          # whole weekdays without calls
//       public_holidays: true                          # the region's public holidays (date-holidays)
//       closed_dates: [2026-12-24]                     # more whole local days without calls
//       max_attempts_per_number: { count: 3, window_hours: 24 }
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { ProblemSink, sortByPosition } from './problems.js';
import { parseSource } from './source.js';
import { checkValue, type Field, type Spec } from './spec.js';
import { WEEKDAY_NAMES, type ConfigProblem, type WeekdayName } from './types.js';
import { holidayCalendarKnown } from '../rules/holidays.js';
import type { DayHours, RegionRule } from '../rules/types.js';
import { attemptCapField } from './attempt-cap-spec.js';

const time: Spec = { kind: 'time' };
const hoursSpec: Spec = {
  kind: 'object',
  fields: {
    start: { spec: time, required: true, description: 'Earliest local time.', example: '08:00' },
    end: { spec: time, required: true, description: 'End of the hours (exclusive), later than start.', example: '21:00' },
  },
};
const REGION = /^[A-Z]{2}(-[A-Z0-9]{1,3})?$/;

/** Every field of one rule. */
export const RULE_FIELDS: Readonly<Record<string, Field>> = {
  region: {
    spec: { kind: 'string', pattern: REGION, noun: 'region', patternHint: 'write an ISO country (US) or country-subdivision (US-TX, CA-ON) in capitals' },
    required: true,
    description: 'Country, or US state / Canadian province, whose numbers the rule applies to.',
    example: 'US-TX',
  },
  source: { spec: { kind: 'string' }, description: 'Where the rule comes from (a statute, a page); shown by explain.', example: 'Tex. Bus. & Com. Code § 301.051' },
  hours: { spec: hoursSpec, description: 'Local hours on every day not named in day_hours.', example: { start: '09:00', end: '21:00' } },
  day_hours: {
    spec: { kind: 'object', fields: Object.fromEntries(WEEKDAY_NAMES.map((d) => [d, { spec: hoursSpec, description: `Local hours on ${d}.` }])) },
    description: 'Local hours of single weekdays, instead of hours.',
    example: { sunday: { start: '12:00', end: '21:00' } },
  },
  no_calls_on: { spec: { kind: 'list', item: { kind: 'enum', values: WEEKDAY_NAMES, noun: 'day name' } }, description: 'Weekdays without calls.', example: ['sunday'] },
  public_holidays: { spec: { kind: 'boolean' }, default: false, description: "No calls on the region's public holidays (date-holidays calendar).", example: true },
  closed_dates: { spec: { kind: 'list', item: { kind: 'date' } }, default: [], description: 'Whole local dates without calls.', example: ['2026-12-24'] },
  max_attempts_per_number: attemptCapField('Attempts to one number (all campaigns) in any rolling window.'),
};

export const RULES_SPEC: Extract<Spec, { kind: 'object' }> = {
  kind: 'object',
  fields: {
    rules: { spec: { kind: 'list', item: { kind: 'object', fields: RULE_FIELDS } }, required: true, description: 'The rules, one per region.' },
  },
};

interface WrittenRule {
  region: string;
  source?: string;
  hours?: { start: number; end: number };
  day_hours?: Partial<Record<WeekdayName, { start: number; end: number }>>;
  no_calls_on?: WeekdayName[];
  public_holidays: boolean;
  closed_dates: string[];
  max_attempts_per_number?: { count: number; window_hours: number };
}

/** Parses a rules file's text; `rules` only when there is no error. */
export function parseRulesText(file: string, text: string): { rules?: RegionRule[]; problems: ConfigProblem[] } {
  const absolute = path.resolve(file);
  const source = parseSource(absolute, text);
  const sink = new ProblemSink(absolute, source);
  if (source.syntaxErrors.length > 0) {
    const problems = source.syntaxErrors.map((e): ConfigProblem => ({ file: absolute, line: e.line, column: e.column, message: e.message, hint: 'fix the YAML syntax', severity: 'error' }));
    return { problems };
  }
  const written = checkValue(RULES_SPEC, source.value ?? {}, [], sink) as { rules?: WrittenRule[] } | undefined;
  const rules: RegionRule[] = [];
  for (const [i, w] of (written?.rules ?? []).entries()) {
    const at = ['rules', i];
    for (const [name, h] of [['hours', w.hours], ...WEEKDAY_NAMES.map((d) => [`day_hours.${d}`, w.day_hours?.[d]] as const)] as const) {
      if (h && h.end <= h.start) {
        sink.error([...at, ...name.split('.'), 'end'], 'must be later than start (rules never run past midnight)', { hint: 'split a night into two days, or use start "00:00" for a day that begins at midnight' });
      }
    }
    if (w.public_holidays && !holidayCalendarKnown(w.region)) {
      sink.error([...at, 'region'], `date-holidays has no calendar for ${w.region}`, { hint: 'use a country or subdivision code date-holidays knows (e.g. US, US-TX, CA-ON), or drop public_holidays' });
    }
    rules.push(normalise(w, absolute));
  }
  const problems = sortByPosition(sink.problems);
  return sink.hasErrors ? { problems } : { rules, problems };
}

function normalise(w: WrittenRule, file: string): RegionRule {
  const rule: RegionRule = { region: w.region, holidays: w.public_holidays, closedDates: [...new Set(w.closed_dates)].sort(), file };
  if (w.source) rule.source = w.source;
  if (w.hours || w.day_hours || w.no_calls_on) {
    const all: DayHours = w.hours ?? { start: 0, end: 0 };
    rule.hours = WEEKDAY_NAMES.map((d): DayHours => (w.no_calls_on?.includes(d) ? null : (w.day_hours?.[d] ?? all)));
  }
  if (w.max_attempts_per_number) rule.maxAttemptsPerNumber = { count: w.max_attempts_per_number.count, windowHours: w.max_attempts_per_number.window_hours };
  return rule;
}

/** Reads and parses a rules file; an unreadable file is one problem. */
export async function readRulesFile(file: string): Promise<{ rules?: RegionRule[]; problems: ConfigProblem[] }> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    const code = (err as { code?: string }).code;
    return { problems: [{ file, message: `cannot read the calling rules file: ${code === 'ENOENT' ? 'no such file' : String(err)}`, hint: 'fix calling_rules (relative paths start at the folder of the file naming it)', severity: 'error' }] };
  }
  return parseRulesText(file, text);
}
