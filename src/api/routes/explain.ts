import { z } from 'zod';
import { explainNumber } from '../../explain/explain.js';
import { exportCampaigns } from '../../store/results-export.js';
import { COUNTRY_PATTERN, pathNumber } from '../phone.js';
import { ApiProblem } from '../problem.js';
import { defineRoute, type Route } from '../route.js';
import { responseSchema } from '../schemas.js';

// `campaignd explain --json` over HTTP: the engine's own planner's verdict on each lead
// with the number, in the same words.

const ExplainedAttempt = z.object({
  id: z.number().int(),
  phone_number: z.string(),
  contact_position: z.number().int(),
  state: z.string(),
  outcome: z.string().nullable(),
  call_status: z.string().nullable(),
  call_id: z.string().nullable(),
  detail: z.string().nullable(),
  created_at: z.string(),
  ended_at: z.string().nullable(),
});
const ExplainedCallback = z.object({
  attempt_id: z.number().int().meta({ description: 'The call in which the person asked.' }),
  asked: z.string().meta({ description: 'The words the assistant extracted.' }),
  zone: z.string().nullable().meta({ description: "The person's zone the words were read in." }),
  state: z.enum(['scheduled', 'placed', 'refused', 'dropped']).meta({ description: 'dropped: the lead ended otherwise (cancelled, suppressed, moved…) before the callback was placed.' }),
  asked_at: z.string().nullable().meta({ description: 'The moment the words name (null: they could not be read).' }),
  scheduled_at: z.string().nullable().meta({ description: 'When the lead is due: the first moment the window and calling rules allow from asked_at.' }),
  moved_reason: z.string().nullable().meta({ description: 'Why scheduled_at is later than asked_at.' }),
  refused_reason: z.string().nullable(),
  dropped_reason: z.string().nullable().meta({ description: "Why it was dropped: the lead's final state and its reason." }),
  callback_attempt_id: z.number().int().nullable().meta({ description: "The callback's own call, once it ended." }),
});
const ExplainedLead = z.object({
  campaign: z.string(),
  lead_id: z.number().int(),
  state: z.string(),
  reason: z.string().meta({ description: 'Machine-readable: window-closed, retry-not-due, at-limit, suppressed, …' }),
  message: z.string().meta({ description: 'One sentence for a person.' }),
  next_call_at: z.string().nullable().meta({ description: "When the lead can next be called, in the campaign's zone; null: now or never." }),
  zones: z.array(z.string()),
  zone_source: z.enum(['lead', 'number', 'campaign']),
  regions: z.array(z.string()),
  contact_position: z.number().int(),
  contacts: z.array(z.string()),
  attempts: z.array(ExplainedAttempt),
  callbacks: z.array(ExplainedCallback).meta({ description: "Callbacks the person asked for in this lead's calls, oldest first." }),
});
const Explanation = responseSchema(
  'Explanation',
  z
    .object({ phone_number: z.string(), daemon_running: z.boolean(), leads: z.array(ExplainedLead).meta({ description: 'Empty: no lead with this number (in the campaign).' }) })
    .meta({ description: 'As `campaignd explain --json` prints it.' }),
);
const Params = z.object({ phone_number: z.string().min(1).max(64).meta({ description: 'E.164, or national in `country`.' }) });
const Query = z.object({
  campaign: z.string().min(1).optional().meta({ description: 'Only the leads of this campaign.' }),
  country: z.string().regex(COUNTRY_PATTERN, 'a two-letter country code, e.g. US').optional().meta({ description: "Read a national number in this country (default: the campaigns' default_country)." }),
});

const explain = defineRoute<z.infer<typeof Params>, z.infer<typeof Query>>({
  method: 'GET',
  path: '/explain/{phone_number}',
  operationId: 'explainNumber',
  summary: 'Why each lead with this number is or is not being called now, and when it next can be',
  tag: 'explain',
  scope: 'read',
  params: Params,
  query: Query,
  responses: { 200: { description: 'The verdict on each lead with the number (primary or secondary).', schema: Explanation } },
  problems: { 404: 'No campaign has the name `campaign` gives.' },
  handle: async ({ params, query, deps }) => {
    const phone = await pathNumber(deps.db, params.phone_number, query.country?.toUpperCase());
    if (query.campaign !== undefined && (await exportCampaigns(deps.db, query.campaign)).length === 0) throw new ApiProblem(404, 'Not found', `no campaign named "${query.campaign}"`);
    const result = await explainNumber(deps.db, phone, deps.clock.now(), deps.isPidAlive);
    const leads = query.campaign === undefined ? result.leads : result.leads.filter((l) => l.campaign === query.campaign);
    return { status: 200, body: { ...result, leads } };
  },
});

export const explainRoutes: Route[] = [explain];
