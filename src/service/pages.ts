import type { z } from 'zod';
import { isRecord } from './errors.js';

/**
 * List answers come as a plain array (spec 4.4, 4.5, 4.12, 4.16–4.18) or as the
 * pagination envelope (spec 2.9; some deployments use it for leads too). Both are
 * normalised to one page shape, and a record that does not parse is skipped and
 * counted rather than failing the whole list.
 */

/** One page of a list, whatever shape the service sent. */
export interface ListPage<T> {
  items: T[];
  /** Page number the service reports (the requested one for plain arrays). */
  page: number;
  lastPage: number | null;
  total: number | null;
  /** True when the service says there is a later page. */
  hasMore: boolean;
  /** Records that did not parse and were left out. */
  skipped: number;
}

/** Normalises a list answer; throws when it is neither an array nor an envelope. */
export function parseListAnswer<S extends z.ZodType>(json: unknown, item: S, requestedPage: number): ListPage<z.output<S>> {
  if (Array.isArray(json)) {
    const { items, skipped } = parseItems(json, item);
    return { items, page: requestedPage, lastPage: null, total: null, hasMore: false, skipped };
  }
  if (isRecord(json) && Array.isArray(json['data'])) {
    const { items, skipped } = parseItems(json['data'], item);
    const page = toInt(json['current_page']) ?? requestedPage;
    const lastPage = toInt(json['last_page']);
    const next = json['next_page_url'];
    const hasMore = (typeof next === 'string' && next !== '') || (lastPage !== null && page < lastPage);
    return { items, page, lastPage, total: toInt(json['total']), hasMore, skipped };
  }
  throw new TypeError('list answer is neither an array nor a pagination envelope');
}

/** Walks pages from `startPage` until the service reports no more. */
export async function* iteratePages<T>(
  fetchPage: (page: number) => Promise<ListPage<T>>,
  startPage = 1,
  maxPages = 100_000,
): AsyncGenerator<T, void, undefined> {
  let page = startPage;
  for (let n = 0; n < maxPages; n++) {
    const p = await fetchPage(page);
    // A server that ignores `page` answers an earlier page again: stop rather than repeat it.
    if (n > 0 && p.page < page) return;
    yield* p.items;
    if (!p.hasMore || p.items.length + p.skipped === 0) return;
    // Ask for the page after the one requested, so a server that ignores `page` cannot loop us.
    page = Math.max(page, p.page) + 1;
  }
}

function parseItems<S extends z.ZodType>(raw: unknown[], item: S): { items: z.output<S>[]; skipped: number } {
  const items: z.output<S>[] = [];
  let skipped = 0;
  for (const r of raw) {
    const parsed = item.safeParse(r);
    if (parsed.success) items.push(parsed.data);
    else skipped++;
  }
  return { items, skipped };
}

function toInt(v: unknown): number | null {
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : NaN;
  return Number.isInteger(n) ? n : null;
}
