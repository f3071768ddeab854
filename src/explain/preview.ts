// `campaignd validate --preview`: for each campaign, how many of its leads can be called
// now, later today (in the campaign's zone), not today, or never, and why — the reasons of
// `explain`, counted. It reads the leads in the store and judges them by the campaign
// files being validated, with the same person windows (zones, lead_local_hours, rules)
// and caps the engine uses.
import { DateTime } from 'luxon';
import type { Kysely } from 'kysely';
import type { CampaignConfig } from '../config/types.js';
import { capHold } from '../engine/caps.js';
import { previewBudget, renderBudgetPreview, type BudgetPreview } from './budget-preview.js';
import { readLeadFacts } from '../engine/person-hold.js';
import { planLead, type LeadPlan } from '../engine/planner.js';
import { runtimeCampaign, type RuntimeCampaign } from '../engine/runtime-campaign.js';
import { listLiveAttempts } from '../store/attempts.js';
import { getCampaignByName } from '../store/campaigns.js';
import { previewLeadsPage, type PreviewLead } from '../store/explain-reads.js';
import { suppressedNumbers } from '../store/suppressions.js';
import type { CampaignRow, Database } from '../store/types.js';

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
  /** The campaign's budget against its leads (README, "Budgets"); absent without a budget. */
  budget?: BudgetPreview;
}

export interface PreviewOptions {
  /** The daemon-wide max_calls_in_parallel of the daemon config being validated (undefined: not set). */
  daemonMaxCalls?: number | undefined;
}

const PAGE = 5_000;

/**
 * Previews every campaign of `configs` against the leads stored for it. Each lead is
 * judged by the engine's planner (planLead) as a running daemon with these files would
 * judge it now, with the live calls in the store; then the preview says when it can be.
 */
export async function previewCampaigns(db: Kysely<Database>, configs: readonly CampaignConfig[], now: number, opts: PreviewOptions = {}): Promise<CampaignPreview[]> {
  const suppressed = await suppressedNumbers(db);
  const live = await listLiveAttempts(db);
  const livePhones = new Set(live.map((a) => a.phone_number));
  const out: CampaignPreview[] = [];
  for (const cfg of configs) {
    const row = await getCampaignByName(db, cfg.name);
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
    const ctx: JudgeContext = {
      db,
      c,
      suppressed,
      now,
      todayEnds: todayEnds.toMillis(),
      livePhones,
      campaignLive: live.filter((a) => a.campaign_id === row.id).length,
      daemonLive: live.length,
      daemonMax: opts.daemonMaxCalls ?? null,
    };
    let after = 0;
    for (;;) {
      const leads = await previewLeadsPage(db, row.id, after, PAGE);
      if (leads.length === 0) break;
      after = leads.at(-1)!.id;
      for (const lead of leads) {
        preview.leads++;
        const [bucket, reason] = await judge(ctx, lead);
        add(bucket, reason);
      }
    }
    if (cfg.budget) {
      const toCall = preview.leads - preview.counts.never - (preview.reasons.now['live-call'] ?? 0);
      preview.budget = await previewBudget(db, row.id, cfg.budget, zone, now, toCall);
    }
  }
  return out;
}

interface JudgeContext {
  db: Kysely<Database>;
  c: RuntimeCampaign;
  suppressed: ReadonlySet<string>;
  now: number;
  todayEnds: number;
  /** Numbers with a live call, the campaign's live calls and all of them: read once. */
  livePhones: ReadonlySet<string>;
  campaignLive: number;
  daemonLive: number;
  daemonMax: number | null;
}

/** The planner's verdict on a lead, then when it can be called: now, later today, not today, never. */
async function judge(x: JudgeContext, lead: PreviewLead): Promise<[PreviewBucket, string]> {
  const { c, now } = x;
  const phone = lead.contact_phone ?? lead.phone_number;
  const facts = await readLeadFacts(x.db, c, lead, phone, now, (p) => x.suppressed.has(p));
  const plan = planLead(facts, {
    now,
    campaign: c,
    // As a daemon running with these files would: the gate is its own to know.
    gate: 'open',
    phoneBusy: x.livePhones.has(phone),
    campaignLive: x.campaignLive,
    campaignMax: c.config.maxCallsInParallel,
    daemonLive: x.daemonLive,
    daemonMax: x.daemonMax,
  });
  switch (plan.kind) {
    case 'final':
      return ['never', plan.state];
    case 'calling':
      return ['now', 'live-call'];
    case 'campaign-problem':
      return ['never', 'campaign-problem'];
    case 'campaign-not-running':
      return ['not_today', `campaign-${plan.state}`];
    case 'suppressed':
      return ['never', 'suppressed'];
  }
  const person = c.person(phone, lead.timezone);
  const due = Math.max(Number(lead.next_due_at ?? now), now);
  let at = person.nextOpening(due);
  if (at === null) return ['never', 'window-never-opens'];
  let reason = reasonOf(plan);
  if (plan.kind === 'attempt-cap') at = person.nextOpening(plan.hold.until) ?? plan.hold.until;
  else if (at > now && at < x.todayEnds) {
    // Held until later today: a cap that still holds the number then moves it on.
    const hold = await capHold(x.db, person.caps, phone, at);
    if (hold) {
      at = person.nextOpening(hold.until) ?? hold.until;
      reason = capReason(hold.cap);
    }
  }
  if (at <= now) return ['now', reason];
  return [at < x.todayEnds ? 'later_today' : 'not_today', reason];
}

/** Explain's code for a verdict that leaves the lead callable some day, with the zone or rule that decides. */
function reasonOf(plan: LeadPlan): string {
  switch (plan.kind) {
    case 'not-due':
      return 'retry-not-due';
    case 'window-closed':
      return 'window-closed';
    case 'person-hours':
      return plan.label.startsWith('lead_local_hours') ? `lead-local-hours (${plan.label.slice('lead_local_hours in '.length)})` : `calling-rule (${plan.label.replace(/^calling rule /, '')})`;
    case 'attempt-cap':
      return capReason(plan.hold.cap);
    case 'campaign-at-limit':
      return 'at-limit';
    case 'daemon-at-limit':
    case 'number-busy':
      return plan.kind;
    default:
      return 'due';
  }
}

function capReason(cap: { count: number; windowHours: number; origin: string }): string {
  return `attempt-cap (${cap.count} per ${cap.windowHours} h, ${cap.origin})`;
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
    if (p.budget) out.push(...renderBudgetPreview(p.budget));
  }
  return `${out.join('\n')}\n`;
}
