import { localTime } from '../status/render.js';
import { formatLocal } from '../time/duration-format.js';
import { html, type Html } from './html.js';

// Times as a person says them: "Thu 23:59 New York" in the campaign's zone, never an ISO
// stamp with an offset. The page's script adds the viewer's own time after it
// ("· Fri 05:59 yours") unless it reads the same; `datetime` keeps the exact instant.

/** "New York" of America/New_York, "Buenos Aires" of America/Argentina/Buenos_Aires; UTC and Etc/… as they are. */
export function zonePlace(zone: string): string {
  if (!zone.includes('/') || zone.startsWith('Etc/')) return zone;
  return (zone.split('/').at(-1) ?? zone).replace(/_/g, ' ');
}

/**
 * An instant as "Thu 23:59 New York" in `zone` ("Mon 7 Dec 09:00 …" beyond six days);
 * without a zone, in the ISO stamp's own offset, no place named.
 */
export function spokenTime(iso: string, zone: string | null, now: number): Html {
  const at = Date.parse(iso);
  const said = localTime(zone && Number.isFinite(at) ? formatLocal(at, zone) : iso, now);
  return html`<time datetime="${iso}" data-local data-said="${said}">${said}${zone ? ` ${zonePlace(zone)}` : ''}</time>`;
}
