import { z } from 'zod';
import { changeCampaignState, type CampaignAction } from '../../lifecycle/campaign-state.js';
import { collectStatus, UnknownCampaignError } from '../../status/collect.js';
import type { ApiDeps } from '../deps.js';
import { ApiProblem } from '../problem.js';
import { defineRoute, type Route } from '../route.js';
import { responseSchema } from '../schemas.js';

// Campaigns as `campaignd status --json` shows them, and their start/stop/pause/resume.
// Their definitions stay in their files: the API reads and steers, it does not edit them.

/** A campaign's part of the status document; later additions to it appear here too. */
export const CampaignStatusSchema = responseSchema(
  'Campaign',
  z
    .looseObject({
      name: z.string(),
      state: z.enum(['running', 'paused', 'stopped', 'completed']),
      window: z.looseObject({ open: z.boolean().nullable(), next_open_at: z.string().nullable(), closes_at: z.string().nullable(), timezone: z.string().nullable() }),
      live_calls: z.number().int(),
      max_calls_in_parallel: z.number().int(),
      leads: z.record(z.string(), z.number().int()).meta({ description: 'Leads by state (total, pending, calling, retry_scheduled, completed, …).' }),
      attempts: z.looseObject({ total: z.number().int(), today: z.number().int() }),
      problem: z.string().nullable(),
      success_rate: z.number().nullable(),
      estimated_finish_at: z.string().nullable(),
      predial: z
        .object({ checks: z.number().int(), failures: z.number().int(), last_failure: z.object({ at: z.string(), detail: z.string() }).nullable() })
        .optional()
        .meta({ description: 'The pre-dial check, for a campaign that has one: checks asked, those without a usable answer, the last of them.' }),
      variants: z
        .array(
          z.object({
            name: z.string(),
            assistant_id: z.number().int(),
            weight: z.number(),
            leads: z.number().int(),
            calls: z.number().int(),
            called_leads: z.number().int(),
            reached: z.number().int(),
            successes: z.number().int(),
            success_rate: z.number().nullable(),
            interval: z.tuple([z.number(), z.number()]).nullable().meta({ description: '95 % Wilson interval of the success rate.' }),
            cost: z.number(),
            cost_per_success: z.number().nullable(),
          }),
        )
        .optional()
        .meta({ description: 'Assistant variants, for a campaign that has them: figures per variant (rates over the leads called).' }),
      variants_p_value: z.number().nullable().optional().meta({ description: "Two-sided p-value of the difference between the variants' success rates." }),
      variants_significant: z.boolean().optional(),
      budget: z
        .object({
          max_cost: z.number().nullable(),
          max_cost_per_day: z.number().nullable(),
          spent: z.number(),
          spent_today: z.number(),
          remaining: z.number().nullable(),
          projected: z.number().meta({ description: 'What the leads still to call would cost at the mean cost per call so far.' }),
          paused: z.boolean().meta({ description: 'A cap holds the campaign: `paused (budget)`.' }),
        })
        .optional()
        .meta({ description: "Spending against the campaign's budget, for a campaign that has one." }),
    })
    .meta({ description: "A campaign's part of `campaignd status --json`." }),
);

const CampaignList = responseSchema('CampaignList', z.object({ campaigns: z.array(CampaignStatusSchema) }));
const StateChange = responseSchema(
  'CampaignStateChange',
  z.object({ campaign: z.string(), from: z.string(), to: z.string(), changed: z.boolean().meta({ description: 'False when the campaign was already in that state.' }) }),
);
const NameParams = z.object({ name: z.string().min(1).meta({ description: "The campaign's name, as in its file." }) });

async function statusOf(deps: ApiDeps, campaign?: string) {
  try {
    return await collectStatus(deps.db, { now: deps.clock.now(), version: deps.version, isPidAlive: deps.isPidAlive, hostname: deps.hostname, ...(campaign !== undefined ? { campaign } : {}) });
  } catch (err) {
    if (err instanceof UnknownCampaignError) throw new ApiProblem(404, 'Not found', err.message);
    throw err;
  }
}

const list = defineRoute({
  method: 'GET',
  path: '/campaigns',
  operationId: 'listCampaigns',
  summary: 'Every campaign with its state, window, live calls and lead counts',
  tag: 'campaigns',
  scope: 'read',
  responses: { 200: { description: 'The campaigns.', schema: CampaignList } },
  handle: async ({ deps }) => ({ status: 200, body: { campaigns: (await statusOf(deps)).campaigns } }),
});

const get = defineRoute<{ name: string }>({
  method: 'GET',
  path: '/campaigns/{name}',
  operationId: 'getCampaign',
  summary: 'One campaign',
  tag: 'campaigns',
  scope: 'read',
  params: NameParams,
  responses: { 200: { description: 'The campaign.', schema: CampaignStatusSchema } },
  handle: async ({ params, deps }) => ({ status: 200, body: (await statusOf(deps, params.name)).campaigns[0] }),
});

const ACTION_SUMMARY: Record<CampaignAction, string> = {
  start: 'Start the campaign (also reopens a completed one)',
  stop: 'Stop the campaign: no new calls; live calls finish',
  pause: 'Pause the campaign: no new calls; live calls finish',
  resume: 'Resume a paused or stopped campaign',
};

const actions = (Object.keys(ACTION_SUMMARY) as CampaignAction[]).map((action) =>
  defineRoute<{ name: string }>({
    method: 'POST',
    path: `/campaigns/{name}/${action}`,
    operationId: `${action}Campaign`,
    summary: ACTION_SUMMARY[action],
    tag: 'campaigns',
    scope: 'write',
    params: NameParams,
    responses: { 200: { description: 'The state before and after.', schema: StateChange } },
    handle: async ({ params, deps }) => {
      const result = await changeCampaignState(deps.db, params.name, action, deps.clock.now(), 'api');
      if (!result.ok) throw new ApiProblem(result.status, result.status === 404 ? 'Not found' : 'Conflict', result.message);
      if (result.to === 'running') deps.wake();
      deps.logger.info({ campaign: params.name, from: result.from, to: result.to }, `campaign ${action} through the API`);
      return { status: 200, body: { campaign: params.name, from: result.from, to: result.to, changed: result.changed } };
    },
  }),
);

export const campaignRoutes: Route[] = [list, get, ...actions];
