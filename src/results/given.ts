import { parseServiceTime } from '../service/schema/service-time.js';
import type { CallResultFields } from '../store/results-types.js';

// What the service reported of a call, read from a webhook payload or a call-list record
// into the fields campaignd keeps (docs/design.md §9). Pure: no database, no logger. A
// value of the wrong type is left out and named in `problems`, never allowed to stop the
// outcome it came with.

// The fields' shape is the call_results row's (store/results-types.ts).
export type { CallResultFields };

/** Longest transcript kept, in UTF-16 units of its JSON (a longer one is cut, and said so). */
export const MAX_TRANSCRIPT_CHARS = 2 * 1024 * 1024;
/** Longest extracted-variables or evaluation JSON kept. */
export const MAX_JSON_CHARS = 256 * 1024;
/** Longest recording URL kept. */
export const MAX_URL_CHARS = 4096;

/** The raw values, named as campaignd reads them; each may be anything the service sent. */
export interface GivenCall {
  id?: unknown;
  status?: unknown;
  answered_by?: unknown;
  duration?: unknown;
  created_at?: unknown;
  finished_at?: unknown;
  cost?: unknown;
  recording_url?: unknown;
  transcript?: unknown;
  extracted_variables?: unknown;
  evaluation?: unknown;
}

export interface ReadResult {
  fields: CallResultFields;
  /** One sentence per field left out or cut: what was wrong and what was kept. */
  problems: string[];
}

/** Reads the result fields of one call; `serverTimezone` reads zone-less timestamps. */
export function readGivenCall(given: GivenCall, serverTimezone: string): ReadResult {
  const problems: string[] = [];
  return {
    fields: {
      callId: text(given.id),
      status: text(given.status),
      answeredBy: text(given.answered_by),
      durationSeconds: number(given.duration),
      startedAt: typeof given.created_at === 'string' ? parseServiceTime(given.created_at, serverTimezone) : null,
      endedAt: typeof given.finished_at === 'string' ? parseServiceTime(given.finished_at, serverTimezone) : null,
      cost: number(given.cost),
      recordingUrl: recordingUrl(given.recording_url, problems),
      transcript: transcript(given.transcript, problems),
      extracted: extracted(given.extracted_variables, problems),
      evaluation: evaluation(given.evaluation, problems),
    },
    problems,
  };
}

function text(v: unknown): string | null {
  if (typeof v === 'string') return v.trim() === '' ? null : v;
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  return null;
}

function number(v: unknown): number | null {
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (typeof v === 'string' && /^\s*-?\d+(\.\d+)?([eE][-+]?\d+)?\s*$/.test(v)) return Number(v);
  return null;
}

function recordingUrl(v: unknown, problems: string[]): string | null {
  if (v == null || v === '') return null;
  if (typeof v !== 'string') {
    problems.push(`recording_url is ${kind(v)}, not a URL: not kept`);
    return null;
  }
  if (v.length > MAX_URL_CHARS) {
    problems.push(`recording_url is ${v.length} characters long (at most ${MAX_URL_CHARS}): not kept`);
    return null;
  }
  let url: URL;
  try {
    url = new URL(v.trim());
  } catch {
    problems.push(`recording_url ${JSON.stringify(v.slice(0, 80))} is not a URL: not kept`);
    return null;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    problems.push(`recording_url has the scheme ${url.protocol} (only http: and https: are kept): not kept`);
    return null;
  }
  return url.href;
}

function transcript(v: unknown, problems: string[]): string | unknown[] | null {
  if (v == null || v === '') return null;
  if (typeof v === 'string') {
    if (v.length <= MAX_TRANSCRIPT_CHARS) return v;
    problems.push(`transcript is ${v.length} characters long: kept its first ${MAX_TRANSCRIPT_CHARS}`);
    return v.slice(0, MAX_TRANSCRIPT_CHARS);
  }
  if (Array.isArray(v)) {
    if (v.length === 0) return null;
    return cutTurns(v, problems);
  }
  problems.push(`transcript is ${kind(v)}, neither text nor a list of turns: not kept`);
  return null;
}

/** Keeps whole turns up to the limit: a list cut in the middle of a turn would not be JSON. */
function cutTurns(turns: unknown[], problems: string[]): unknown[] {
  let size = 2;
  for (let i = 0; i < turns.length; i++) {
    size += (JSON.stringify(turns[i]) ?? 'null').length + 1;
    if (size > MAX_TRANSCRIPT_CHARS) {
      problems.push(`transcript has ${turns.length} turns over ${MAX_TRANSCRIPT_CHARS} characters: kept the first ${i}`);
      return turns.slice(0, i);
    }
  }
  return turns;
}

function extracted(v: unknown, problems: string[]): Record<string, unknown> | null {
  if (v == null) return null;
  // PHP backends send an empty object as [].
  if (Array.isArray(v) && v.length === 0) return null;
  if (typeof v !== 'object' || Array.isArray(v)) {
    problems.push(`extracted_variables is ${kind(v)}, not an object of NAME: value: not kept`);
    return null;
  }
  const entries = Object.keys(v);
  if (entries.length === 0) return null;
  const json = JSON.stringify(v);
  if (json.length > MAX_JSON_CHARS) {
    problems.push(`extracted_variables is ${json.length} characters of JSON (at most ${MAX_JSON_CHARS}): not kept`);
    return null;
  }
  return v as Record<string, unknown>;
}

function evaluation(v: unknown, problems: string[]): unknown {
  if (v == null || v === '') return null;
  if (Array.isArray(v) && v.length === 0) return null;
  if (typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 0) return null;
  const json = JSON.stringify(v);
  if (json.length > MAX_JSON_CHARS) {
    problems.push(`evaluation is ${json.length} characters of JSON (at most ${MAX_JSON_CHARS}): not kept`);
    return null;
  }
  return v;
}

function kind(v: unknown): string {
  if (Array.isArray(v)) return 'a list';
  if (v === null) return 'null';
  if (typeof v === 'string') return 'text';
  return `a ${typeof v}`;
}
