import {
  createLeadRequest,
  listLeadsQuery,
  updateCampaignStatusRequest,
} from '../service/schema/requests.js';
import { json, message, validationFailed, type Handler } from './http-util.js';
import { paginate, parseWith, queryObject } from './pagination.js';
import { campaignRecord, leadRecord } from './records.js';
import type { SimState } from './state.js';
import { DAY_MS, parseDay } from './time-format.js';
import type { SimLead } from './types.js';

/** POST /api/user/lead (4.3): a lead and its secondary contacts, all `created`. */
export const createLead: Handler = ({ body, state, user, clock }) => {
  const parsed = parseWith(createLeadRequest, body);
  if (!parsed.ok) return validationFailed(parsed.errors);
  const d = parsed.data;
  const campaign = state.owned(state.campaigns, d.campaign_id, user.id);
  if (!campaign) return validationFailed({ campaign_id: ['The selected campaign id is invalid.'] });
  if (d.allow_dupplicate !== true && hasLead(state, campaign.id, d.phone_number)) {
    return validationFailed({ phone_number: ['The phone number has already been taken in this campaign.'] });
  }
  const now = clock.now();
  const lead = newLead(state, user.id, campaign.id, d.phone_number, d.variables ?? {}, null, now);
  for (const sc of d.secondary_contacts ?? []) {
    const contact = newLead(state, user.id, campaign.id, sc.phone_number, sc.variables ?? {}, lead.id, now);
    lead.secondaryIds.push(contact.id);
  }
  return json(201, { message: 'Lead created successfully', data: leadRecord(state, lead) });
};

function hasLead(state: SimState, campaignId: number, phone: string): boolean {
  for (const l of state.leads.values()) {
    if (l.campaignId === campaignId && l.parentId === null && l.phone_number === phone) return true;
  }
  return false;
}

function newLead(
  state: SimState,
  userId: number,
  campaignId: number,
  phone: string,
  variables: Record<string, unknown>,
  parentId: number | null,
  now: number,
): SimLead {
  const lead: SimLead = {
    id: state.nextId('lead'),
    userId,
    campaignId,
    phone_number: phone,
    variables,
    status: 'created',
    parentId,
    secondaryIds: [],
    createdAt: now,
    updatedAt: now,
  };
  state.leads.set(lead.id, lead);
  return lead;
}

/** GET /api/user/leads (4.4): main leads, filtered as the live service is reported to (docs/simulator.md); a plain array. */
export function listLeads(paginated: boolean): Handler {
  return ({ state, user, url, origin }) => {
    const parsed = parseWith(listLeadsQuery, queryObject(url));
    if (!parsed.ok) return validationFailed(parsed.errors);
    const q = parsed.data;
    const from = q.date_from === undefined ? null : parseDay(q.date_from);
    const to = q.date_to === undefined ? null : parseDay(q.date_to);
    const leads = state
      .allOf(state.leads, user.id)
      .filter((l) => l.parentId === null)
      .filter((l) => q.status === undefined || l.status === q.status)
      .filter((l) => q.campaign_id === undefined || l.campaignId === q.campaign_id)
      .filter((l) => q.phone_number === undefined || l.phone_number.includes(q.phone_number))
      .filter((l) => from === null || l.createdAt >= from)
      .filter((l) => to === null || l.createdAt < to + DAY_MS);
    const record = (l: (typeof leads)[number]) => leadRecord(state, l);
    if (!paginated) return json(200, leads.map(record));
    return json(200, paginate(leads, q.page ?? 1, q.per_page ?? 15, origin, url, record));
  };
}

/** GET /api/user/campaigns (4.5): a plain array. */
export const listCampaigns: Handler = ({ state, user }) =>
  json(200, state.allOf(state.campaigns, user.id).map(campaignRecord));

/** POST /api/user/campaigns/update-status (4.6): start → in-progress, stop → stopped. */
export const updateCampaignStatus: Handler = ({ body, state, user, clock }) => {
  const parsed = parseWith(updateCampaignStatusRequest, body);
  if (!parsed.ok) return validationFailed(parsed.errors);
  const campaign = state.owned(state.campaigns, parsed.data.campaign_id, user.id);
  if (!campaign) return message(404, 'Campaign not found');
  const start = parsed.data.action === 'start';
  campaign.status = start ? 'in-progress' : 'stopped';
  campaign.updatedAt = clock.now();
  return json(200, {
    message: start ? 'Campaign started successfully.' : 'Campaign stopped successfully.',
    success: true,
    data: { campaign_id: campaign.id, status: campaign.status },
  });
};
