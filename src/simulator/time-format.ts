// The two timestamp shapes of the spec: leads and calls carry `YYYY-MM-DD HH:MM:SS`
// (the simulator's zone is UTC), tools, assistants and campaigns ISO 8601 with
// microseconds and a trailing Z.

const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

/** Epoch ms → `YYYY-MM-DD HH:MM:SS` in UTC. */
export function plainTime(ms: number): string {
  const d = new Date(ms);
  return (
    `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ` +
    `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`
  );
}

/** Epoch ms → `YYYY-MM-DDTHH:MM:SS.ffffffZ` (microseconds always present). */
export function isoMicros(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/** `YYYY-MM-DD` → epoch ms of that UTC midnight, or null when not a real date. */
export function parseDay(text: string): number | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (!m) return null;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const ms = Date.UTC(y, mo - 1, d);
  const back = new Date(ms);
  if (back.getUTCFullYear() !== y || back.getUTCMonth() !== mo - 1 || back.getUTCDate() !== d) return null;
  return ms;
}

export const DAY_MS = 86_400_000;
