// Rule 5, row by row: every status of the spec with every answered_by.

import { describe, expect, it } from 'vitest';
import { KNOWN_CALL_STATUSES, classifyCall, isFinalStatus } from '../../src/engine/outcome.js';

const ENDED = ['completed', 'ended', 'ended_by_customer', 'ended_by_assistant'];

describe('classifyCall', () => {
  it('in progress: initiated, ringing, in-progress, whoever answered', () => {
    for (const s of ['initiated', 'ringing', 'in-progress']) {
      for (const a of [null, undefined, 'human', 'machine', 'unknown']) expect(classifyCall(s, a)).toBe('in-progress');
    }
  });
  it('success: the ended statuses unless answered_by is machine', () => {
    for (const s of ENDED) {
      for (const a of [null, undefined, 'human', 'unknown', '']) expect(classifyCall(s, a)).toBe('success');
    }
  });
  it('voicemail: the ended statuses answered by a machine', () => {
    for (const s of ENDED) expect(classifyCall(s, 'machine')).toBe('voicemail');
    expect(classifyCall('completed', ' Machine ')).toBe('voicemail');
  });
  it('busy, no-answer and failed as themselves, even if a machine is named', () => {
    for (const s of ['busy', 'no-answer', 'failed'] as const) {
      expect(classifyCall(s, null)).toBe(s);
      expect(classifyCall(s, 'machine')).toBe(s);
    }
  });
  it('reads case and blanks liberally, and the underscore spellings', () => {
    expect(classifyCall(' Completed ', 'human')).toBe('success');
    expect(classifyCall('NO_ANSWER', null)).toBe('no-answer');
    expect(classifyCall('in_progress', null)).toBe('in-progress');
  });
  it('anything else is an unknown status', () => {
    for (const s of ['', 'queued', 'canceled', 'voicemail', 'ended-by-customer', 'success']) {
      expect(classifyCall(s, null)).toBe('unknown-status');
    }
  });
});

describe('isFinalStatus', () => {
  it('is true exactly for the spec statuses that end a call', () => {
    const finals = KNOWN_CALL_STATUSES.filter((s) => isFinalStatus(s));
    expect(new Set(finals)).toEqual(new Set([...ENDED, 'busy', 'no-answer', 'failed']));
    expect(KNOWN_CALL_STATUSES).toHaveLength(10);
    expect(isFinalStatus('ringing')).toBe(false);
    expect(isFinalStatus('whatever')).toBe(false);
    expect(isFinalStatus('BUSY')).toBe(true);
  });
});
