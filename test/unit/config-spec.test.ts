import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatProblems, summarizeProblems } from '../../src/config/format.js';
import { isRealDate, parseTimeOfDay } from '../../src/config/spec.js';
import { didYouMean, editDistance } from '../../src/config/suggest.js';

describe('parseTimeOfDay', () => {
  it('reads HH:MM and HH:MM:SS as seconds after midnight', () => {
    expect(parseTimeOfDay('00:00')).toBe(0);
    expect(parseTimeOfDay('09:05')).toBe(9 * 3600 + 5 * 60);
    expect(parseTimeOfDay('9:05:07')).toBe(9 * 3600 + 5 * 60 + 7);
    expect(parseTimeOfDay('23:59:59')).toBe(86_399);
  });

  it('rejects what is not a time of day', () => {
    for (const bad of ['24:00', '12:60', '12:00:60', '12', '12:0', 'noon', '', '12:00:00:00', '-1:00']) expect(parseTimeOfDay(bad), bad).toBeUndefined();
  });

  it('round-trips every second of the day', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 86_399 }), (s) => {
        const pad = (n: number): string => String(n).padStart(2, '0');
        return parseTimeOfDay(`${pad(Math.floor(s / 3600))}:${pad(Math.floor(s / 60) % 60)}:${pad(s % 60)}`) === s;
      }),
    );
  });
});

describe('isRealDate', () => {
  it('accepts real dates, leap days included', () => {
    expect(isRealDate('2026-12-24')).toBe(true);
    expect(isRealDate('2028-02-29')).toBe(true);
  });

  it('rejects impossible and badly written dates', () => {
    for (const bad of ['2026-02-29', '2026-02-30', '2026-13-01', '2026-00-10', '2026-1-5', '24.12.2026', '2026-12-24T00:00']) expect(isRealDate(bad), bad).toBe(false);
  });
});

describe('did you mean', () => {
  it('measures swaps, insertions and deletions as one edit each', () => {
    expect(editDistance('mnoday', 'monday')).toBe(1);
    expect(editDistance('alowed', 'allowed')).toBe(1);
    expect(editDistance('kitten', 'sitting')).toBe(3);
    expect(editDistance('', 'abc')).toBe(3);
  });

  it('is symmetric and zero only for equal strings', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 12 }), fc.string({ maxLength: 12 }), (a, b) => {
        const d = editDistance(a, b);
        return d === editDistance(b, a) && (d === 0) === (a === b);
      }),
    );
  });

  it('suggests close names and stays quiet for unrelated ones', () => {
    const fields = ['allowed_days', 'allowed_hours_start_time', 'max_retries', 'retry_interval'];
    expect(didYouMean('alowed_days', fields)).toBe('allowed_days');
    expect(didYouMean('allowed-days', fields)).toBe('allowed_days');
    expect(didYouMean('allowed_hours_start', fields)).toBe('allowed_hours_start_time');
    expect(didYouMean('max_retry', fields)).toBe('max_retries');
    expect(didYouMean('colour', fields)).toBeUndefined();
    expect(didYouMean('funday', ['monday', 'sunday'])).toBe('sunday');
  });
});

describe('formatProblems', () => {
  it('prints one compact line per problem, relative to cwd, with severity only for warnings', () => {
    const text = formatProblems(
      [
        { file: '/repo/config/campaigns/x.yaml', line: 12, column: 3, field: 'allowed_days[2]', message: '"funday" is not a day name (did you mean "sunday"?)', hint: 'use one of monday…sunday', severity: 'error' },
        { file: '/repo/config/leads/x.csv', line: 7, field: 'phone_number', message: '"12" cannot be called: too short', severity: 'warning' },
        { file: '$CAMPAIGND_LOG_LEVEL', message: '"chatty" is not a log level', severity: 'error' },
        { file: '/elsewhere/campaignd.yaml', message: 'the file is empty', severity: 'error' },
      ],
      { cwd: '/repo' },
    );
    expect(text.split('\n')).toEqual([
      'config/campaigns/x.yaml:12:3 allowed_days[2]: "funday" is not a day name (did you mean "sunday"?) — use one of monday…sunday',
      'config/leads/x.csv:7 warning phone_number: "12" cannot be called: too short',
      '$CAMPAIGND_LOG_LEVEL: "chatty" is not a log level',
      '/elsewhere/campaignd.yaml: the file is empty',
    ]);
  });

  it('counts errors and warnings', () => {
    const s = summarizeProblems([
      { file: 'a', message: 'x', severity: 'error' },
      { file: 'a', message: 'y', severity: 'warning' },
      { file: 'a', message: 'z', severity: 'warning' },
    ]);
    expect(s).toEqual({ errors: 1, warnings: 2, text: '1 error, 2 warnings' });
  });
});
