// The pagination envelope of spec 2.9, as Laravel's paginate() writes it WITHOUT
// withQueryString(): page URLs carry `page` only and drop the request's filters, so a
// client that follows next_page_url blindly loses its filters. `per_page` out of range
// is clamped, not refused; a page past the end is empty.
import { shuffle } from './prng.mjs';

/** Reads `per_page` (default `fallback`, clamped to 1..max) and `page` (default 1). */
export function pageQuery(params, fallback, max) {
  const perRaw = Number.parseInt(params.get('per_page') ?? '', 10);
  const pageRaw = Number.parseInt(params.get('page') ?? '', 10);
  const perPage = Number.isFinite(perRaw) ? Math.min(max, Math.max(1, perRaw)) : fallback;
  const page = Number.isFinite(pageRaw) && pageRaw >= 1 ? pageRaw : 1;
  return { perPage, page };
}

/**
 * One page of `items` (already in the list's order) as the envelope; with `rand`, the
 * items of the page are shuffled (the set on each page stays that of the order).
 */
export function envelope(items, { perPage, page }, pathUrl, rand = null) {
  const total = items.length;
  const lastPage = Math.max(1, Math.ceil(total / perPage));
  const slice = items.slice((page - 1) * perPage, page * perPage);
  if (rand) shuffle(rand, slice);
  const url = (n) => `${pathUrl}?page=${n}`;
  const links = [
    { url: page > 1 ? url(page - 1) : null, label: '&laquo; Previous', active: false },
    ...Array.from({ length: lastPage }, (_, i) => ({ url: url(i + 1), label: String(i + 1), active: i + 1 === page })),
    { url: page < lastPage ? url(page + 1) : null, label: 'Next &raquo;', active: false },
  ];
  return {
    current_page: page,
    data: slice,
    first_page_url: url(1),
    from: slice.length ? (page - 1) * perPage + 1 : null,
    last_page: lastPage,
    last_page_url: url(lastPage),
    links,
    next_page_url: page < lastPage ? url(page + 1) : null,
    path: pathUrl,
    per_page: perPage,
    prev_page_url: page > 1 ? url(page - 1) : null,
    to: slice.length ? (page - 1) * perPage + slice.length : null,
    total,
  };
}
