import type { Kysely } from 'kysely';
import type { Logger } from '../log/logger.js';
import { addSuppressions, suppressLeadsOfNumbers } from '../store/suppressions.js';
import type { AttemptRow, Database } from '../store/types.js';
import type { RuntimeCampaign } from './runtime-campaign.js';
import { extractedText } from './extracted.js';

// Opt-outs (docs/design.md §11): when a call's extracted variable says the person wants
// no more calls, the number joins the suppression list at once, for every campaign, and
// every lead waiting to call it (a scheduled retry, here or in another campaign) becomes
// `suppressed`. Called once per observed end of a call, from the webhook and the call list;
// applying it twice changes nothing.

export interface OptOutContext {
  db: Kysely<Database>;
  logger: Logger;
  now: () => number;
  campaign: (id: number) => RuntimeCampaign | undefined;
}

/** Whether `variables` hold the campaign's opt-out answer. Values compare as trimmed, case-insensitive text. */
export function saysOptOut(optOut: { variable: string; values: readonly string[] } | undefined, variables: unknown): boolean {
  const text = optOut && extractedText(variables, optOut.variable)?.toLowerCase();
  if (text === undefined) return false;
  return optOut!.values.some((v) => v.trim().toLowerCase() === text);
}

/** Suppresses the attempt's number when its call's extracted variables opt out; true when they did. */
export async function applyOptOut(ctx: OptOutContext, attempt: AttemptRow, variables: unknown): Promise<boolean> {
  const campaign = ctx.campaign(attempt.campaign_id);
  if (!saysOptOut(campaign?.config.optOut, variables)) return false;
  const now = ctx.now();
  const phone = attempt.phone_number;
  const added = await addSuppressions(ctx.db, [phone], `opt-out:${campaign!.name}`, now);
  const leads = await suppressLeadsOfNumbers(ctx.db, [phone], now, 'opted out of calls');
  if (added > 0 || leads > 0) ctx.logger.info({ campaign: campaign!.name, attempt: attempt.id, leadsSuppressed: leads }, 'the person opted out: number added to the suppression list');
  return true;
}
