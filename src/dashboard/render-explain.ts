import type { Explanation } from '../explain/explain.js';
import { html, type Html } from './html.js';
import { spokenTime } from './when.js';

// `campaignd explain` for the search box: the same document, drawn as HTML.

/** Where the explanation's times are said: each campaign's zone (from the report), and the report's instant. */
export interface SayTimes {
  zoneOf(campaign: string): string | null;
  now: number;
}

export function renderExplanation(x: Explanation, say: SayTimes): Html {
  if (x.leads.length === 0) return html`<p class="none">${x.phone_number}: no lead with this number in any campaign.</p>`;
  return html`${x.leads.map(
    (lead) => html`<article class="explain" data-campaign="${lead.campaign}">
<h3>${x.phone_number} in <b>${lead.campaign}</b> <small>lead ${lead.lead_id}</small> <span class="state">${lead.state}</span></h3>
<p class="why"><b>Why:</b> ${lead.message} <code>${lead.reason}</code></p>
${lead.next_call_at ? html`<p>Next possible call: ${spokenTime(lead.next_call_at, say.zoneOf(lead.campaign), say.now)}</p>` : ''}
${lead.contacts.length > 1 ? html`<p>Contacts: ${lead.contacts.map((c, i) => html`${i > 0 ? ' → ' : ''}${i === lead.contact_position ? html`<b>${c}</b>` : c}`)}</p>` : ''}
${
  lead.attempts.length === 0
    ? html`<p class="muted">No attempts yet.</p>`
    : html`<table class="attempts"><thead><tr><th>#</th><th>created</th><th>number</th><th>result</th><th>call status</th><th>detail</th></tr></thead><tbody>${lead.attempts.map(
        (a) => html`<tr><td>${a.id}</td><td>${spokenTime(a.created_at, say.zoneOf(lead.campaign), say.now)}</td><td>${a.phone_number}</td><td>${a.outcome ?? a.state}</td><td>${a.call_status ?? ''}</td><td>${a.detail ?? ''}</td></tr>`,
      )}</tbody></table>`
}
</article>`,
  )}${x.daemon_running ? '' : html`<p class="muted">No daemon is running on this database right now.</p>`}`;
}

/** A number that could not be read. */
export function renderSearchProblem(query: string, reason: string): Html {
  return html`<p class="problem">"${query}" is not a phone number campaignd can read: ${reason}. Write it in international form, e.g. +15551234567.</p>`;
}
