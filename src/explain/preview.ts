// `campaignd validate --preview`: for each campaign, how many of its leads can be called
// now, later today (in the campaign's zone), not today, or never, and why — the reasons of
// `explain`, counted. It reads the leads in the store and judges them by the campaign
// files being validated, with the same person windows (zones, lead_local_hours, rules)
// and caps the engine uses.
import { DateTime } from 'luxon';
import type { Kysely } from 'kysely';
import type { CampaignConfig } from '../config/types.js';
import { capHold } from '../engine/caps.js';
import { runtimeCampaign, type RuntimeCampaign } from '../engine/runtime-campaign.js';
import type { CampaignRow, Database } from '../store/types.js';
import { isOpen } from '../time/window.js';

export type PreviewBucket = 'now' | 'later_today' | 'not_today' | 'never';

export interface CampaignPreview {
  campaign: string;
  /** The end of "today": local midnight in the campaign's zone. */
  today_ends: string;
  leads: number;
  counts: Record<PreviewBucket, number>;
  /** Reason → leads, per bucket (reason codes as explain's, with the zone or rule where one decides). */
  reasons: Record<PreviewBucket, Record<string, number>>;
  /** Set when the campaign is not in the store yet (its leads were never imported). */
  note?: string;
}

const PAGE = 5_000;

/** Previews every campaign of `configs` against the leads stored for it. */
export async function previewCampaigns(db: Kysely<Database>, configs: readonly CampaignConfig[], now: number): Promise<CampaignPreview[]> {
  const suppressed = new Set((await db.selectFrom('suppressions').select('phone_number').execute()).map((r) => r.phone_number));
  const out: CampaignPreview[] = [];
  for (const cfg of configs) {
    const row = await db.selectFrom('campaigns').selectAll().where('name', '=', cfg.name).executeTakeFirst();
    const zone = row?.timezone ?? cfg.timezone ?? 'UTC';
    const todayEnds = DateTime.fromMillis(now, { zone }).plus({ days: 1 }).startOf('day');
    const preview: CampaignPreview = {
      campaign: cfg.name,
      today_ends: todayEnds.toISO({ suppressMilliseconds: true }) ?? '',
      leads: 0,
      counts: { now: 0, later_today: 0, not_today: 0, never: 0 },
      reasons: { now: {}, later_today: {}, not_today: {}, never: {} },
    };
    out.push(preview);
    if (!row) {
      preview.note = 'not in the store yet: no leads imported';
      continue;
    }
    // The files being validated decide, not the settings stored at the last load.
    const c = runtimeCampaign({ ...row, config_json: JSON.stringify(cfg) } as CampaignRow);
    const add = (bucket: PreviewBucket, reason: string): void => {
      preview.counts[bucket]++;
      preview.reasons[bucket][reason] = (preview.reasons[bucket][reason] ?? 0) + 1;
    };
    let after = 0;
    for (;;) {
      const leads = await db
        .selectFrom('leads')
        .leftJoin('lead_contacts', (j) => j.onRef('lead_contacts.lead_id', '=', 'leads.id').onRef('lead_contacts.position', '=', 'leads.contact_position'))
        .select(['leads.id', 'leads.state', 'leads.phone_number', 'lead_contacts.phone_number as contact_phone', 'leads.timezone', 'leads.next_due_at'])
        .where('leads.campaign_id', '=', row.id)
        .where('leads.id', '>', after)
        .orderBy('leads.id')
        .limit(PAGE)
        .execute();
      if (leads.length === 0) break;
      after = leads.at(-1)!.id;
      for (const lead of leads) {
        preview.leads++;
        const [bucket, reason] = await judge(db, c, row, lead, suppressed, now, todayEnds.toMillis());
        add(bucket, reason);
      }
    }
  }
  return out;
}

async function judge(
  db: Kysely<Database>,
  c: RuntimeCampaign,
  row: CampaignRow,
  lead: { state: string; phone_number: string; contact_phone: string | null; timezone: string | null; next_due_at: number | null },
  suppressed: Set<string>,
  now: number,
  todayEnds: number,
): Promise<[PreviewBucket, string]> {
  if (lead.state !== 'pending' && lead.state !== 'retry-scheduled' && lead.state !== 'calling') return ['never', lead.state];
  if (lead.state === 'calling') return ['now', 'live-call'];
  const phone = lead.contact_phone ?? lead.phone_number;
  if (suppressed.has(phone)) return ['never', 'suppressed'];
  if (row.problem) return ['never', 'campaign-problem'];
  if (row.state !== 'running') return ['not_today', `campaign-${row.state}`];
  const person = c.person(phone, lead.timezone);
  const due = Math.max(Number(lead.next_due_at ?? now), now);
  let at = person.nextOpening(due);
  if (at === null) return ['never', 'window-never-opens'];
  // Why not at once: the first thing that holds it, in explain's order.
  let reason = 'due';
  if (due > now) reason = 'retry-not-due';
  else if (!isOpen(c.window, now)) reason = 'window-closed';
  else {
    const closed = person.closedBy(now);
    if (closed) reason = closed.label.startsWith('lead_local_hours') ? `lead-local-hours (${closed.label.slice('lead_local_hours in '.length)})` : `calling-rule (${closed.label.replace(/^calling rule /, '')})`;
  }
  if (at < todayEnds && person.caps.length > 0) {
    const hold = await capHold(db, person.caps, phone, at);
    if (hold) {
      at = person.nextOpening(hold.until) ?? hold.until;
      reason = `attempt-cap (${hold.cap.count} per ${hold.cap.windowHours} h, ${hold.cap.origin})`;
    }
  }
  if (at <= now) return ['now', reason];
  return [at < todayEnds ? 'later_today' : 'not_today', reason];
}

/** The preview as lines for a person. */
export function renderPreview(previews: readonly CampaignPreview[]): string {
  const out: string[] = [];
  const label: Record<PreviewBucket, string> = { now: 'now', later_today: 'later today', not_today: 'not today', never: 'never' };
  for (const p of previews) {
    if (p.note) {
      out.push(`${p.campaign}: ${p.note}`);
      continue;
    }
    out.push(`${p.campaign}: ${p.leads} lead${p.leads === 1 ? '' : 's'} — now ${p.counts.now}, later today ${p.counts.later_today} (before ${p.today_ends}), not today ${p.counts.not_today}, never ${p.counts.never}`);
    for (const b of ['now', 'later_today', 'not_today', 'never'] as const) {
      const entries = Object.entries(p.reasons[b]).sort((x, y) => y[1] - x[1]);
      if (entries.length > 0) out.push(`  ${label[b]}: ${entries.map(([r, n]) => `${r} ${n}`).join(', ')}`);
    }
  }
  return `${out.join('\n')}\n`;
}
