import { parseServiceTime } from '../service/schema/records.js';
import type { ServiceClient } from '../service/client.js';
import type { CallSummary, EngineClient } from './ports.js';
import { isFinalStatus } from './outcome.js';

const PER_PAGE = 100;
/** 100,000 calls since the oldest live attempt's day: far beyond any real poll. */
const MAX_PAGES = 1000;

/** Adapts the typed service client to the narrow interface the engine works with. */
export function engineClientFrom(client: ServiceClient): EngineClient {
  const zone = client.serverTimezone;
  return {
    async makeCall(req, opts) {
      const answer = await client.makeCall(req, opts?.canSend ? { beforeSend: opts.canSend } : undefined);
      return { callId: answer.callId, sent: answer.sent };
    },
    async listCallsSince(assistantId, dateFrom, onPage) {
      // A list that never ends (next_page_url pointing at itself, a server that ignores
      // `page`) must not hold the poller forever. Such a list fails the poll rather than
      // ending it early: a shortened list would make missing calls look settled (rule 6).
      let previous = new Set<string>();
      for (let page = 1; ; page++) {
        if (page > MAX_PAGES) throw new Error(`list_calls: more than ${MAX_PAGES} pages; the call list does not end`);
        const result = await client.listCalls({ assistant_id: assistantId, date_from: dateFrom, per_page: PER_PAGE, page });
        const ids = new Set(result.items.map((c) => String(c.id)));
        if (page > 1 && result.page < page) throw new Error(`list_calls: asked for page ${page}, the service answered page ${result.page} (it ignores page=)`);
        if (page > 1 && ids.size > 0 && [...ids].every((id) => previous.has(id))) {
          throw new Error(`list_calls: page ${page} repeats page ${page - 1} (a next_page_url that loops?)`);
        }
        previous = ids;
        const calls: CallSummary[] = result.items.map((c) => ({
          id: String(c.id),
          clientPhoneNumber: c.client_phone_number ?? '',
          status: c.status,
          answeredBy: c.answered_by,
          createdAt: parseServiceTime(c.created_at, zone),
          given: {
            id: c.id,
            status: c.status,
            answered_by: c.answered_by,
            duration: c.duration,
            created_at: c.created_at,
            // The call record has no finished_at; an ended call's last change is its end, on
            // the service's clock like created_at (results take both ends from one clock).
            finished_at: isFinalStatus(c.status) ? c.updated_at : null,
            cost: c.total_cost ?? c.carrier_cost,
            recording_url: c.given?.recording_url,
            transcript: c.given?.transcript,
            // The call record's `variables` are what the assistant extracted (the webhook's extracted_variables).
            extracted_variables: c.given?.variables,
            evaluation: c.given?.evaluation,
          },
        }));
        const stop = onPage(calls);
        if (stop === true || !result.hasMore || result.items.length === 0) return;
      }
    },
    async probe() {
      await client.listOutboundAssistants();
    },
    async assistants() {
      const out: Awaited<ReturnType<EngineClient['assistants']>> = [];
      for await (const a of client.iterateAssistants({ per_page: 100 })) {
        out.push({ id: Number(a.id), timezone: a.timezone ?? null, maxDurationSeconds: a.max_duration ?? null, type: a.type ?? 'outbound' });
      }
      return out;
    },
    async remoteCampaignStatuses() {
      const campaigns = await client.listCampaigns();
      return new Map(campaigns.map((c) => [Number(c.id), String(c.status ?? '')]));
    },
    async updateRemoteCampaign(campaignId, action) {
      await client.updateCampaignStatus({ campaign_id: campaignId, action });
    },
    budgetHeadroom: () => client.budget.headroom(),
  };
}
