import fs from 'node:fs';
import type { Clock } from '../time/clock.js';

// A one-line progress bar for `leads import` on a terminal (stderr), redrawn at most ten
// times a second. The total is an estimate (lines in the file), so the bar caps at 99%
// until the import says it is done.

/** Counts newline-terminated lines quickly (bytes, not characters); used to size the bar. */
export async function countLines(file: string): Promise<number> {
  let lines = 0;
  let last = 10;
  for await (const chunk of fs.createReadStream(file, { highWaterMark: 1 << 20 }) as AsyncIterable<Buffer>) {
    let i = -1;
    while ((i = chunk.indexOf(10, i + 1)) !== -1) lines++;
    if (chunk.length > 0) last = chunk[chunk.length - 1] ?? 10;
  }
  if (last !== 10) lines++;
  // The header is not a lead.
  return Math.max(0, lines - 1);
}

/** Draws `label [#####.....] 45% 450,000/1,000,000 rows` with `\r`; `done` ends the line. */
export function createProgressBar(out: NodeJS.WritableStream, label: string, total: number, clock: Pick<Clock, 'now'>, width = 30): { update: (rows: number) => void; done: () => void } {
  let lastDraw = -Infinity;
  let rows = 0;
  const draw = (final: boolean): void => {
    const ratio = total > 0 ? Math.min(final ? 1 : 0.99, rows / total) : final ? 1 : 0;
    const filled = Math.round(ratio * width);
    const bar = `${'#'.repeat(filled)}${'.'.repeat(width - filled)}`;
    out.write(`\r${label} [${bar}] ${String(Math.floor(ratio * 100)).padStart(3)}% ${rows.toLocaleString('en')}/${Math.max(total, rows).toLocaleString('en')} rows`);
  };
  return {
    update(n: number) {
      rows = n;
      const now = clock.now();
      if (now - lastDraw >= 100) {
        lastDraw = now;
        draw(false);
      }
    },
    done() {
      draw(true);
      out.write('\n');
    },
  };
}
