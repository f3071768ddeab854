import type { CampaignStatus } from '../status/types.js';

// What the overview shows and in which order: read from the page's query string
// (`?show=problems&sort=finish&dir=desc&open=NAME`), so that a view is a link, survives
// the 2-s refresh (status.json gets the same query) and a pause (the form sends it back).
// Unknown values fall back to the defaults: the query is the viewer's to edit.

/** Filters of the overview, in the order their links appear. */
export const FILTERS = {
  all: { label: 'All', test: (): boolean => true },
  running: { label: 'Running', test: (c: CampaignStatus): boolean => c.state === 'running' },
  problems: { label: 'Problems', test: (c: CampaignStatus): boolean => c.problem !== null },
  closed: { label: 'Window closed', test: (c: CampaignStatus): boolean => c.window.open === false },
  // By account: once campaigns belong to accounts, one entry per account joins here
  // (built from the report, e.g. `account:NAME`); parseView accepts whatever key is listed.
} as const satisfies Record<string, { label: string; test: (c: CampaignStatus) => boolean }>;

export type FilterKey = keyof typeof FILTERS;

/** A sort key's value for a campaign; null sorts last whichever the direction. */
type SortValue = string | number | null;

const STATE_ORDER: Record<string, number> = { running: 0, paused: 1, stopped: 2, completed: 3 };

/** The overview's columns, in order: heading and sort value. */
export const COLUMNS = {
  name: { label: 'Campaign', value: (c: CampaignStatus): SortValue => c.name },
  state: { label: 'State', value: (c: CampaignStatus): SortValue => STATE_ORDER[c.state] ?? 9 },
  // Open windows first, by when they close; then closed ones, by when they open.
  window: { label: 'Window', value: (c: CampaignStatus): SortValue => windowOrder(c) },
  live: { label: 'Live', value: (c: CampaignStatus): SortValue => c.live_calls },
  progress: { label: 'Progress', value: (c: CampaignStatus): SortValue => (c.leads.total > 0 ? finishedOf(c) / c.leads.total : null) },
  success: { label: 'Success', value: (c: CampaignStatus): SortValue => c.success_rate },
  finish: { label: 'Finish', value: (c: CampaignStatus): SortValue => (c.estimated_finish_at ? Date.parse(c.estimated_finish_at) : null) },
  problem: { label: 'Problem', value: (c: CampaignStatus): SortValue => c.problem },
} as const satisfies Record<string, { label: string; value: (c: CampaignStatus) => SortValue }>;

export type SortKey = keyof typeof COLUMNS;

export interface View {
  show: FilterKey;
  sort: SortKey;
  desc: boolean;
  /** The campaign whose card is open under its row. */
  open: string | null;
}

export const DEFAULT_VIEW: View = { show: 'all', sort: 'name', desc: false, open: null };

export function parseView(params: URLSearchParams): View {
  const show = params.get('show') ?? '';
  const sort = params.get('sort') ?? '';
  const open = params.get('open');
  return {
    show: show in FILTERS ? (show as FilterKey) : DEFAULT_VIEW.show,
    sort: sort in COLUMNS ? (sort as SortKey) : DEFAULT_VIEW.sort,
    desc: params.get('dir') === 'desc',
    open: open === null || open === '' ? null : open,
  };
}

/** The query string of `view` ("" for the default view, else "?…"), defaults left out. */
export function viewQuery(view: View): string {
  const p = new URLSearchParams();
  if (view.show !== DEFAULT_VIEW.show) p.set('show', view.show);
  if (view.sort !== DEFAULT_VIEW.sort) p.set('sort', view.sort);
  if (view.desc) p.set('dir', 'desc');
  if (view.open !== null) p.set('open', view.open);
  const q = p.toString();
  return q === '' ? '' : `?${q}`;
}

/**
 * The campaigns `view` shows, in its order (ties by name). The opened one stays whatever
 * the filter: pausing it from "Running" must not take its card away.
 */
export function selectCampaigns(campaigns: readonly CampaignStatus[], view: View): CampaignStatus[] {
  const filter: (c: CampaignStatus) => boolean = FILTERS[view.show].test;
  const test = (c: CampaignStatus): boolean => c.name === view.open || filter(c);
  const value = COLUMNS[view.sort].value;
  const sign = view.desc ? -1 : 1;
  return campaigns
    .filter(test)
    .map((c) => ({ c, v: value(c) }))
    .sort((a, b) => {
      if (a.v !== b.v) {
        if (a.v === null) return 1;
        if (b.v === null) return -1;
        return sign * (a.v < b.v ? -1 : 1);
      }
      return a.c.name < b.c.name ? -1 : a.c.name > b.c.name ? 1 : 0;
    })
    .map((x) => x.c);
}

/** Leads in a final state: completed, out of retries, invalid, suppressed, cancelled, moved to another campaign. */
export function finishedOf(c: CampaignStatus): number {
  const l = c.leads;
  return l.completed + l.reached_max_retries + l.invalid + l.suppressed + l.cancelled + l.moved;
}

function windowOrder(c: CampaignStatus): SortValue {
  const w = c.window;
  if (w.open === null) return null;
  // Open ones by when they close (never: last of them), then closed ones by when they open;
  // both offsets stay below 2^53, where every millisecond is still a distinct number.
  const at = w.open ? w.closes_at : w.next_open_at;
  const ms = at ? Date.parse(at) : 3e15;
  return (w.open ? 0 : 4e15) + ms;
}
