import { describe, expect, it } from 'vitest';
import { MAX_TRANSCRIPT_CHARS, readGivenCall } from '../../src/results/given.js';

describe('results: reading what the service sent of a call', () => {
  it('keeps a transcript as given: text stays text, a list of turns stays a list', () => {
    const turns = [{ text: 'Hi', sender: 'AI', type: 'bot', timestamp: 1 }, { text: 'Hello', sender: 'user' }];
    expect(readGivenCall({ transcript: 'plain text' }, 'UTC').fields.transcript).toBe('plain text');
    expect(readGivenCall({ transcript: turns }, 'UTC').fields.transcript).toEqual(turns);
  });

  it('reads numbers and times liberally (numeric strings, zone-less stamps in the server zone)', () => {
    const { fields, problems } = readGivenCall(
      { id: 17, status: 'completed', duration: '42', cost: '0.05', created_at: '2026-01-05 09:00:00', finished_at: '2026-01-05T09:00:42Z', answered_by: 'human' },
      'Europe/Berlin',
    );
    expect(problems).toEqual([]);
    expect(fields).toMatchObject({ callId: '17', status: 'completed', durationSeconds: 42, cost: 0.05, answeredBy: 'human' });
    expect(fields.startedAt).toBe(Date.UTC(2026, 0, 5, 8, 0, 0));
    expect(fields.endedAt).toBe(Date.UTC(2026, 0, 5, 9, 0, 42));
  });

  it('keeps a 1 MB transcript whole and cuts a longer one, saying so', () => {
    const mb = 'x'.repeat(1024 * 1024);
    const kept = readGivenCall({ transcript: mb }, 'UTC');
    expect(kept.fields.transcript).toBe(mb);
    expect(kept.problems).toEqual([]);
    const huge = readGivenCall({ transcript: 'y'.repeat(MAX_TRANSCRIPT_CHARS + 10) }, 'UTC');
    expect((huge.fields.transcript as string).length).toBe(MAX_TRANSCRIPT_CHARS);
    expect(huge.problems[0]).toMatch(/transcript is \d+ characters long: kept its first/);
  });

  it('leaves out extracted variables that are not an object, a recording URL that is not a URL, a transcript of the wrong type', () => {
    const { fields, problems } = readGivenCall({ extracted_variables: 'interested', recording_url: 'not a url', transcript: 42, status: 'completed' }, 'UTC');
    expect(fields).toMatchObject({ extracted: null, recordingUrl: null, transcript: null, status: 'completed' });
    expect(problems).toEqual([
      'recording_url "not a url" is not a URL: not kept',
      'transcript is a number, neither text nor a list of turns: not kept',
      'extracted_variables is text, not an object of NAME: value: not kept',
    ]);
    expect(readGivenCall({ recording_url: 'javascript:alert(1)' }, 'UTC').problems[0]).toMatch(/scheme javascript:/);
    expect(readGivenCall({ extracted_variables: [1, 2] }, 'UTC').problems[0]).toMatch(/extracted_variables is a list/);
  });

  it('reads empty shapes ([] for {}, "", null) as not said', () => {
    const { fields, problems } = readGivenCall({ extracted_variables: [], evaluation: {}, transcript: '', recording_url: '' }, 'UTC');
    expect(problems).toEqual([]);
    expect(fields).toMatchObject({ extracted: null, evaluation: null, transcript: null, recordingUrl: null });
  });
});
