import { z } from 'zod';
import { exportResults, parseCursor } from '../../results/export.js';
import { exportCampaigns, type ChangeCursor } from '../../store/results-export.js';
import { ApiProblem } from '../problem.js';
import { defineRoute, type Route } from '../route.js';
import { responseSchema } from '../schemas.js';

// The results export (`campaignd results --format jsonl`) as a feed a client polls: each
// line is a lead at its last change, in the order of changes, with the `cursor` to ask
// from next time. A lead that changes again appears again, later in the feed, with its
// new state: a client that keeps the last cursor it read and asks with `since=` gets
// every change after it exactly once (a lead changed twice between two polls: once, as
// it is now).

/**
 * Changes younger than this are left for the next poll: a write stamped with its time
 * may still be committing when the feed is read, and a cursor already past it would skip
 * it for good. (A transaction that takes longer than this to commit could still be
 * missed; none of campaignd's does.)
 */
export const RESULTS_SETTLE_MS = 5_000;

const Cursor = z.string().meta({ description: 'Where this line is in the feed: pass it as `since` to get only what changed after it. Opaque ("CHANGED_AT_MS.LEAD_ID").' });

/** What a call asked of callbacks (README, "Callbacks the person asks for"): the last call's at the top, each call's in attempt_history. */
const CallbackFields = {
  callback_asked: z.string().nullable().meta({ description: 'The words with which the call asked to be called back; null when it did not ask.' }),
  callback_state: z.enum(['scheduled', 'placed', 'refused', 'dropped']).nullable().meta({ description: 'What became of that callback; dropped: the lead ended otherwise before it was placed.' }),
  callback_scheduled_at: z.string().nullable().meta({ description: 'When it was due (ISO 8601, UTC): the asked moment, or the first allowed one after it; null when refused.' }),
  callback_refused_reason: z.string().nullable().meta({ description: 'Why it was not scheduled.' }),
  callback_call: z.boolean().meta({ description: "True when this call was a callback's own call." }),
};

const ResultLine = responseSchema(
  'ResultLine',
  z
    .looseObject({
      cursor: Cursor,
      campaign: z.string(),
      lead_id: z.number().int(),
      phone_number: z.string().meta({ description: 'The contact reached or last tried.' }),
      state: z.string(),
      state_reason: z.string().nullable(),
      attempts: z.number().int(),
      last_outcome: z.string().nullable(),
      last_call_status: z.string().nullable(),
      answered_by: z.string().nullable(),
      duration_seconds: z.number().nullable(),
      started_at: z.string().nullable(),
      ended_at: z.string().nullable(),
      times_from: z.string().nullable(),
      cost: z.number().nullable(),
      recording_url: z.string().nullable(),
      ...CallbackFields,
      variables: z.record(z.string(), z.unknown()).meta({ description: "The lead's own columns." }),
      extracted: z.record(z.string(), z.unknown()).meta({ description: 'What the assistant extracted in the last call.' }),
      evaluation: z.unknown(),
      transcript: z.unknown(),
      attempt_history: z.array(z.looseObject({ attempt_id: z.number().int(), phone_number: z.string(), state: z.string(), ...CallbackFields })),
    })
    .meta({ description: 'One lead as `campaignd results --format jsonl` writes it, with its feed cursor first. The API sends one per line (application/jsonl).' }),
);

const SINCE_HELP = 'a cursor from a line of an earlier answer (e.g. 1764151200000.42), or an ISO date or instant (2026-11-01, 2026-11-01T09:00:00Z)';

const ResultsQuery = z.object({
  campaign: z.string().min(1).optional().meta({ description: 'Only this campaign (default: every campaign).' }),
  since: z
    .string()
    .optional()
    .meta({ description: `Only leads changed after this point: ${SINCE_HELP}. A cursor resumes exactly after its line; an instant includes changes at that instant.` }),
});

/** `since` as a feed position: a cursor as it is; an instant as "just before it". */
function sinceCursor(since: string | undefined): ChangeCursor {
  if (since === undefined) return { changedAt: -1, leadId: 0 };
  const cursor = parseCursor(since);
  if (cursor) return cursor;
  const ms = /^\d{4}-\d{2}-\d{2}$/.test(since) ? Date.parse(`${since}T00:00:00Z`) : /^\d{4}-\d{2}-\d{2}T/.test(since) ? Date.parse(since) : NaN;
  if (!Number.isFinite(ms)) throw new ApiProblem(400, 'Invalid query', `since=${JSON.stringify(since).slice(0, 60)} is neither: use ${SINCE_HELP}`, [{ pointer: '/query/since', message: `use ${SINCE_HELP}` }]);
  // Strictly after (ms - 1, any lead) = changed at or after ms.
  return { changedAt: ms - 1, leadId: Number.MAX_SAFE_INTEGER };
}

const results = defineRoute<undefined, z.infer<typeof ResultsQuery>>({
  method: 'GET',
  path: '/results',
  operationId: 'streamResults',
  summary: 'What the calls produced, one lead per line, resumable',
  description:
    'The `campaignd results --format jsonl` export as JSON lines, streamed: leads in the order they last changed, each with a `cursor`. ' +
    'Keep the last line\'s cursor and ask again with `since=CURSOR` to get every lead that changed after it, once each (a lead that changed again comes again, as it is now). ' +
    `Changes of the last ${RESULTS_SETTLE_MS / 1000} seconds are left for the next request, so that none is skipped while it is being written. An empty answer means nothing changed.`,
  tag: 'results',
  scope: 'read',
  query: ResultsQuery,
  responses: { 200: { description: 'JSON lines, one lead each (an empty body when nothing changed).', schema: ResultLine, contentType: 'application/jsonl' } },
  problems: { 404: 'No campaign has the name `campaign` gives.' },
  handle: async ({ query, deps }) => {
    const after = sinceCursor(query.since);
    const campaigns = await exportCampaigns(deps.db, query.campaign);
    if (query.campaign !== undefined && campaigns.length === 0) throw new ApiProblem(404, 'Not found', `no campaign named "${query.campaign}"`);
    const until = deps.clock.now() - RESULTS_SETTLE_MS;
    return {
      status: 200,
      text: async (write) => {
        await exportResults(
          deps.db,
          {
            format: 'jsonl',
            scope: query.campaign === undefined ? {} : { campaignIds: campaigns.map((c) => c.id) },
            campaignNames: new Map(campaigns.map((c) => [c.id, c.name])),
            feed: { after, until },
          },
          write,
        );
      },
    };
  },
});

export const resultRoutes: Route[] = [results];
