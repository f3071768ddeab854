import type { CallbackConfig } from '../config/types.js';
import { readCallbackTime } from '../rules/callback-time.js';
import type { PersonWindow } from '../rules/person-window.js';
import type { CallbackNote } from '../store/callbacks.js';
import { isOpen, type WindowSpec } from '../time/window.js';
import { extractedMap, extractedText } from './extracted.js';

// Callbacks the person asks for (README, "Callbacks the person asks for"). Pure: from the
// call's extracted variable, the person's zone and the campaign's rules, what to record
// (and whether to schedule). The lead becomes due at the asked moment; the dial loop's
// gate (campaign window, calling rules, caps) moves it to the first allowed moment from
// there, which is computed here too, with the same functions, only to be shown by explain.

/** The campaign as a callback decision needs it. */
export interface CallbackCampaign {
  window: WindowSpec;
  person(phone: string, leadZone: string | null): PersonWindow;
}

/** The lead's side: how many callbacks it was given, its zone column and the number called. */
export interface CallbackLead {
  callbacks_given: number;
  timezone: string | null;
}

/**
 * What the call asked, or null when the variable holds nothing (no callback asked).
 * `zone` is the person's (docs: from the lead's timezone column, its number, else the
 * campaign's zone); a number spanning several zones is read in the first of them.
 */
export function callbackNote(cfg: CallbackConfig, variables: unknown, campaign: CallbackCampaign, lead: CallbackLead, phone: string, endedAt: number): CallbackNote | null {
  const asked = extractedText(variables, cfg.variable);
  if (asked === undefined || asked.trim() === '') return null;
  const person = campaign.person(phone, lead.timezone);
  const zone = person.zones[0]!;
  const extracted = extractedMap(variables);
  const refused = (reason: string, askedAt: number | null = null): CallbackNote => ({ asked, zone, askedAt, dueAt: null, movedReason: null, refusedReason: reason, extracted });
  const reading = readCallbackTime(asked, { reference: endedAt, zone, horizonDays: cfg.horizonDays });
  if (!reading.ok) return refused(reading.reason);
  if (lead.callbacks_given >= cfg.maxPerLead) return refused(`max_per_lead reached (${cfg.maxPerLead})`, reading.at);
  const opening = person.nextOpening(reading.at);
  if (opening === null) return refused('the campaign window and calling rules allow no call within 400 days of it', reading.at);
  return { asked, zone, askedAt: reading.at, dueAt: opening, movedReason: opening > reading.at ? movedBecause(campaign, person, reading.at) : null, refusedReason: null, extracted };
}

function movedBecause(campaign: CallbackCampaign, person: PersonWindow, at: number): string {
  if (!isOpen(campaign.window, at)) return 'outside the campaign window';
  const closed = person.closedBy(at);
  return closed ? `outside the person's hours: ${closed.label}` : 'outside the campaign window';
}
