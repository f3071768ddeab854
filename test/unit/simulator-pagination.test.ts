// The simulator's pagination envelope (spec 2.9, Laravel's length-aware paginator): page
// links are Laravel's URL window, and only the page's own items are shaped into records.
import { describe, expect, it } from 'vitest';
import { linkedPages, paginate } from '../../src/simulator/pagination.js';

describe('linkedPages (Laravel URL window, 3 on each side)', () => {
  it('lists every page of a short list', () => {
    expect(linkedPages(1, 1)).toEqual([1]);
    expect(linkedPages(5, 13)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]);
  });

  it('near the start, in the middle and near the end of a long list', () => {
    expect(linkedPages(2, 100)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, null, 99, 100]);
    expect(linkedPages(50, 100)).toEqual([1, 2, null, 47, 48, 49, 50, 51, 52, 53, null, 99, 100]);
    expect(linkedPages(97, 100)).toEqual([1, 2, null, 92, 93, 94, 95, 96, 97, 98, 99, 100]);
  });
});

describe('paginate', () => {
  it('shapes only the items of the page, and keeps links bounded however long the list', () => {
    const items = Array.from({ length: 10_000 }, (_, i) => i + 1);
    let shaped = 0;
    const env = paginate(items, 40, 100, 'http://sim', new URL('http://sim/api/user/calls?per_page=100&page=40'), (n) => {
      shaped++;
      return { id: n };
    });
    expect(shaped).toBe(100);
    expect(env).toMatchObject({ current_page: 40, last_page: 100, from: 3901, to: 4000, total: 10_000 });
    expect((env.data as { id: number }[])[0]).toEqual({ id: 3901 });
    const links = env.links as { url: string | null; label: string; active: boolean }[];
    expect(links.length).toBeLessThanOrEqual(15);
    expect(links.filter((l) => l.active).map((l) => l.label)).toEqual(['40']);
    expect(links.filter((l) => l.label === '...').every((l) => l.url === null)).toBe(true);
  });
});
