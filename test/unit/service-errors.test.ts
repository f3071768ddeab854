import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { DEFAULT_RETRY_AFTER_MS, extractFieldErrors, kindForStatus, retryAfterMs } from '../../src/service/errors.js';
import { iteratePages, parseListAnswer, type ListPage } from '../../src/service/pages.js';
import { readMakeCall } from '../../src/service/client.js';

describe('error classification by status and shape', () => {
  it.each([
    [422, { message: 'Validation failed', errors: { name: ['bad'] } }, true, 'validation'],
    [422, { message: 'You have reached the limit of 5 tools' }, true, 'rejected'],
    [404, { message: 'Assistant not found' }, true, 'not-found'],
    [400, { message: 'Invalid phone number' }, true, 'rejected'],
    [409, null, true, 'rejected'],
    [429, { retry_after: 60 }, true, 'rate-limited'],
    [401, { error: 'Invalid API key' }, true, 'token-rejected'],
    [403, {}, true, 'token-rejected'],
    [302, undefined, false, 'token-rejected'],
    [307, undefined, false, 'token-rejected'],
    [200, undefined, false, 'token-rejected'],
    [200, { odd: true }, true, 'server'],
    [500, { message: 'Assistant creation failed' }, true, 'server'],
    [503, undefined, false, 'server'],
    [404, undefined, false, 'not-found'],
  ] as const)('%i %j (json %s) is %s', (status, body, isJson, kind) => {
    expect(kindForStatus(status, body, isJson)).toBe(kind);
  });

  it('ignores message text entirely', () => {
    expect(kindForStatus(422, { message: 'Validation failed' }, true)).toBe('rejected');
    expect(kindForStatus(400, { message: 'Validation failed', errors: { a: ['x'] } }, true)).toBe('rejected');
  });

  it('reads field errors, turning single strings into lists', () => {
    expect(extractFieldErrors({ errors: { name: ['a', 'b'], phone: 'c' } })).toEqual({ name: ['a', 'b'], phone: ['c'] });
    expect(extractFieldErrors({ message: 'x' })).toBeUndefined();
  });
});

describe('retryAfterMs', () => {
  const now = Date.UTC(2026, 0, 5, 9, 0, 0);
  it('prefers the header in seconds', () => expect(retryAfterMs('7', { retry_after: 60 }, now)).toBe(7000));
  it('reads an HTTP-date header', () =>
    expect(retryAfterMs(new Date(now + 30_000).toUTCString(), undefined, now)).toBe(30_000));
  it('never waits a negative time for a date in the past', () =>
    expect(retryAfterMs(new Date(now - 30_000).toUTCString(), undefined, now)).toBe(0));
  it('falls back to the body', () => {
    expect(retryAfterMs(undefined, { retry_after: 12 }, now)).toBe(12_000);
    expect(retryAfterMs('', { retry_after: '3' }, now)).toBe(3000);
  });
  it('defaults to 60 s', () => {
    expect(retryAfterMs(undefined, { message: 'slow down' }, now)).toBe(DEFAULT_RETRY_AFTER_MS);
    expect(retryAfterMs('soon', null, now)).toBe(60_000);
  });
});

describe('make_call answers', () => {
  it('uses call_id from the top level or from data, as a string', () => {
    expect(readMakeCall({ message: 'Call initiated successfully', call_id: 480337, status: 'initiated' })).toEqual({ message: 'Call initiated successfully', callId: '480337', sent: true });
    expect(readMakeCall({ message: 'ok', data: { call_id: '77' } })).toEqual({ message: 'ok', callId: '77', sent: true });
    expect(readMakeCall({ message: 'ok', data: { id: 78 } }).callId).toBe('78');
  });
  it('never throws on odd bodies: a 2xx is a placement', () => {
    expect(readMakeCall({ message: 'Call initiated successfully', data: {} })).toEqual({ message: 'Call initiated successfully', callId: null, sent: true });
    expect(readMakeCall({ message: 'ok', data: [] }).callId).toBeNull();
    expect(readMakeCall([1, 2])).toEqual({ message: '', callId: null, sent: true });
    expect(readMakeCall(null)).toEqual({ message: '', callId: null, sent: true });
  });
});

describe('list answers', () => {
  const item = z.looseObject({ id: z.number() });
  it('reads a plain array as a single last page', () => {
    expect(parseListAnswer([{ id: 1 }, { id: 2 }], item, 1)).toMatchObject({ items: [{ id: 1 }, { id: 2 }], hasMore: false, page: 1 });
  });
  it('reads an envelope and knows whether more pages follow', () => {
    expect(parseListAnswer({ current_page: 1, last_page: 3, data: [{ id: 1 }], next_page_url: 'http://x?page=2' }, item, 1).hasMore).toBe(true);
    expect(parseListAnswer({ current_page: '3', last_page: 3, data: [{ id: 1 }], next_page_url: null }, item, 3)).toMatchObject({ hasMore: false, page: 3, lastPage: 3 });
  });
  it('leaves out and counts records that do not parse', () => {
    expect(parseListAnswer([{ id: 1 }, { id: 'x' }, 5], item, 1)).toMatchObject({ items: [{ id: 1 }], skipped: 2 });
  });
  it('refuses something that is no list', () => {
    expect(() => parseListAnswer({ message: 'x' }, item, 1)).toThrow(TypeError);
  });
  it('iterates pages to the end and stops on a server that ignores the page number', async () => {
    const asked: number[] = [];
    const pages = async (page: number): Promise<ListPage<number>> => {
      asked.push(page);
      return { items: [page * 10, page * 10 + 1], page, lastPage: 3, total: 6, hasMore: page < 3, skipped: 0 };
    };
    const seen: number[] = [];
    for await (const n of iteratePages(pages)) seen.push(n);
    expect(seen).toEqual([10, 11, 20, 21, 30, 31]);
    expect(asked).toEqual([1, 2, 3]);

    let calls = 0;
    const stuck = async (): Promise<ListPage<number>> => ({ items: [calls++], page: 1, lastPage: 2, total: 2, hasMore: true, skipped: 0 });
    const out: number[] = [];
    for await (const n of iteratePages(stuck)) out.push(n);
    expect(out).toEqual([0]);
    expect(calls).toBe(2);
  });
});
