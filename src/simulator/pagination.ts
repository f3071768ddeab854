import type { z } from 'zod';
import { fieldErrors } from '../service/schema/requests.js';

/** Validation result of a request body or query. */
export type Parsed<T> = { ok: true; data: T } | { ok: false; errors: Record<string, string[]> };

/** Runs a request schema of src/service/schema/requests.ts on an input. */
export function parseWith<S extends z.ZodType>(schema: S, input: unknown): Parsed<z.output<S>> {
  const result = schema.safeParse(input);
  return result.success ? { ok: true, data: result.data } : { ok: false, errors: fieldErrors(result.error) };
}

/** A query string as a plain object (the last value of a repeated name wins). */
export function queryObject(url: URL): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of url.searchParams) out[k] = v;
  return out;
}

/**
 * The pagination envelope of spec 2.9, shaped like Laravel's length-aware paginator.
 * Page URLs keep the request's other query parameters (filters, per_page) so a client
 * that follows `next_page_url` stays on the same result set. `toRecord` shapes only the
 * page's items, so a page costs the same however many items match.
 */
export function paginate<T, R = T>(
  items: readonly T[],
  page: number,
  perPage: number,
  origin: string,
  url: URL,
  toRecord: (item: T) => R = (item) => item as unknown as R,
): Record<string, unknown> {
  const total = items.length;
  const lastPage = Math.max(1, Math.ceil(total / perPage));
  const start = (page - 1) * perPage;
  const data = items.slice(start, start + perPage).map(toRecord);
  const path = `${origin}${url.pathname}`;
  const pageUrl = (n: number): string => {
    const q = new URLSearchParams(url.searchParams);
    q.delete('page');
    q.append('page', String(n));
    return `${path}?${q.toString()}`;
  };
  const links: { url: string | null; label: string; active: boolean }[] = [
    { url: page > 1 ? pageUrl(page - 1) : null, label: '&laquo; Previous', active: false },
  ];
  for (const n of linkedPages(page, lastPage)) {
    links.push(n === null ? { url: null, label: '...', active: false } : { url: pageUrl(n), label: String(n), active: n === page });
  }
  links.push({ url: page < lastPage ? pageUrl(page + 1) : null, label: 'Next &raquo;', active: false });
  return {
    current_page: page,
    data,
    first_page_url: pageUrl(1),
    from: data.length > 0 ? start + 1 : null,
    last_page: lastPage,
    last_page_url: pageUrl(lastPage),
    links,
    next_page_url: page < lastPage ? pageUrl(page + 1) : null,
    path,
    per_page: perPage,
    prev_page_url: page > 1 ? pageUrl(page - 1) : null,
    to: data.length > 0 ? start + data.length : null,
    total,
  };
}

/** Pages Laravel's URL window links (3 on each side of the current one); null is a "..." gap. */
export function linkedPages(page: number, lastPage: number, onEachSide = 3): (number | null)[] {
  const range = (from: number, to: number): number[] => Array.from({ length: Math.max(0, to - from + 1) }, (_, i) => from + i);
  const window = onEachSide * 2;
  if (lastPage < window + 8) return range(1, lastPage);
  if (page <= window) return [...range(1, window + 2), null, ...range(lastPage - 1, lastPage)];
  if (page > lastPage - window) return [...range(1, 2), null, ...range(lastPage - (window + 2), lastPage)];
  return [...range(1, 2), null, ...range(page - onEachSide, page + onEachSide), null, ...range(lastPage - 1, lastPage)];
}
