// The tests' own rule-1 check (test/helpers/wall-clock.ts), used by the chaos, soak and
// end-to-end invariants: right on the cases docs/design.md §3.1 names, in agreement with the
// daemon's window code minute by minute across daylight-saving changes, and independent of
// it (no import from src/engine/ or src/time/).
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Weekday } from '../../src/config/types.js';
import { isOpen, type WindowSpec } from '../../src/time/window.js';
import { insideWallWindow, previousDate, wallClock, type WallWindow } from '../helpers/wall-clock.js';
import { ROOT } from '../helpers/processes.js';

const h = (hh: number, mm = 0): number => hh * 3600 + mm * 60;
const ALL: Weekday[] = [1, 2, 3, 4, 5, 6, 7];

describe('wallClock', () => {
  it('reads the local date, ISO weekday and time of day, across a change', () => {
    // Berlin, Sunday 2026-03-29: 01:59:59 CET, then 03:00 CEST.
    expect(wallClock(Date.UTC(2026, 2, 29, 0, 59, 59), 'Europe/Berlin')).toEqual({ date: '2026-03-29', weekday: 7, seconds: h(1, 59) + 59 });
    expect(wallClock(Date.UTC(2026, 2, 29, 1, 0, 0), 'Europe/Berlin')).toEqual({ date: '2026-03-29', weekday: 7, seconds: h(3) });
    // Midnight is 00, not 24.
    expect(wallClock(Date.UTC(2026, 0, 1, 0, 0, 0), 'UTC')).toEqual({ date: '2026-01-01', weekday: 4, seconds: 0 });
    expect(previousDate('2026-03-01')).toBe('2026-02-28');
  });
});

describe('insideWallWindow', () => {
  it('a window whose start falls in the spring gap opens when the clock jumps past it', () => {
    const w: WallWindow = { timezone: 'Europe/Berlin', days: ALL, start: h(2, 30), end: h(5) };
    expect(insideWallWindow(w, Date.UTC(2026, 2, 29, 0, 59))).toBe(false);
    expect(insideWallWindow(w, Date.UTC(2026, 2, 29, 1, 0))).toBe(true);
  });

  it('a window past midnight belongs to the day it started on', () => {
    const w: WallWindow = { timezone: 'America/New_York', days: [5, 6], start: h(22), end: h(2) };
    // 01:00 local on Saturday 2026-06-06 (Friday's window), Sunday (Saturday's), Monday (Sunday's: not allowed).
    expect(insideWallWindow(w, Date.UTC(2026, 5, 6, 5, 0))).toBe(true);
    expect(insideWallWindow(w, Date.UTC(2026, 5, 7, 5, 0))).toBe(true);
    expect(insideWallWindow(w, Date.UTC(2026, 5, 8, 5, 0))).toBe(false);
    // 02:00 is the end: closed.
    expect(insideWallWindow(w, Date.UTC(2026, 5, 6, 6, 0))).toBe(false);
  });

  it('a blackout date closes the whole day, and a window past midnight that started on it', () => {
    const w: WallWindow = { timezone: 'UTC', days: ALL, start: h(23), end: h(1), blackoutDates: ['2026-12-24'] };
    expect(insideWallWindow(w, Date.UTC(2026, 11, 24, 23, 30))).toBe(false);
    expect(insideWallWindow(w, Date.UTC(2026, 11, 25, 0, 30))).toBe(false);
    expect(insideWallWindow(w, Date.UTC(2026, 11, 25, 23, 30))).toBe(true);
  });

  it('start = end is the whole allowed day', () => {
    const w: WallWindow = { timezone: 'Asia/Kathmandu', days: [2], start: h(13), end: h(13) };
    // Tuesday 2026-03-03 00:00 and 23:59 in Kathmandu (UTC+05:45).
    expect(insideWallWindow(w, Date.UTC(2026, 2, 2, 18, 15))).toBe(true);
    expect(insideWallWindow(w, Date.UTC(2026, 2, 3, 18, 14))).toBe(true);
    expect(insideWallWindow(w, Date.UTC(2026, 2, 3, 18, 15))).toBe(false);
  });

  it.each([
    ['Europe/Berlin', Date.UTC(2026, 2, 27), Date.UTC(2026, 2, 31)],
    ['Europe/Berlin', Date.UTC(2026, 9, 23), Date.UTC(2026, 9, 27)],
    ['Australia/Lord_Howe', Date.UTC(2026, 3, 2), Date.UTC(2026, 3, 6)],
    ['America/Santiago', Date.UTC(2026, 8, 4), Date.UTC(2026, 8, 8)],
  ])('agrees with the daemon minute by minute around the change in %s', (zone, from, to) => {
    const windows: WindowSpec[] = [
      { timezone: zone, days: ALL, start: h(2), end: h(2, 30) },
      { timezone: zone, days: [5, 6], start: h(23, 30), end: h(2, 15) },
      { timezone: zone, days: ALL, start: h(0, 30), end: h(3), blackoutDates: ['2026-09-06', '2026-04-05'] },
    ];
    const disagreements: string[] = [];
    for (const w of windows) {
      for (let t = from; t < to; t += 60_000) {
        const mine = insideWallWindow(w, t);
        if (mine !== isOpen(w, t) && disagreements.length < 5) disagreements.push(`${new Date(t).toISOString()} ${JSON.stringify(w)}: helper ${mine}`);
      }
    }
    expect(disagreements).toEqual([]);
  });
});

describe('independence', () => {
  it('the rule-1 invariant imports nothing from the engine or the window code', () => {
    for (const file of ['test/helpers/invariants.ts', 'test/helpers/wall-clock.ts']) {
      const imports = [...fs.readFileSync(path.join(ROOT, file), 'utf8').matchAll(/from '([^']+)'/g)].map((m) => m[1]);
      expect(imports.filter((i) => /src\/(engine|time)\//.test(i!)), file).toEqual([]);
    }
  });
});
