// Timestamps as the live service writes them: calls and webhooks carry
// "YYYY-MM-DD HH:MM:SS" with no zone, in the SERVER's zone (as deployments are
// reported to send them); assistants carry ISO 8601 with microseconds and Z (spec 2.4). The server
// zone is an option and is not UTC by default, so a client that reads zone-less stamps
// as UTC is caught.

const formatters = new Map();

function partsIn(zone, ms) {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-CA', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formatters.set(zone, f);
  }
  const out = {};
  for (const p of f.formatToParts(new Date(ms))) out[p.type] = p.value;
  return out;
}

/** "YYYY-MM-DD HH:MM:SS" of instant `ms` on the wall clock of `zone`. */
export function wallClock(zone, ms) {
  const p = partsIn(zone, ms);
  return `${p.year}-${p.month}-${p.day} ${p.hour}:${p.minute}:${p.second}`;
}

/** "YYYY-MM-DD", the local date of instant `ms` in `zone` (what date_from / date_to compare with). */
export function localDate(zone, ms) {
  return wallClock(zone, ms).slice(0, 10);
}

/** ISO 8601 with microseconds and Z, as the spec shows for assistants. */
export function isoMicro(ms) {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/** Throws unless `zone` is an IANA zone this Node knows. */
export function checkZone(zone) {
  partsIn(zone, 0);
}
