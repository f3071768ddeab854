import { stat } from 'node:fs/promises';
import type { Kysely } from 'kysely';
import type { CampaignConfig, DaemonConfig, LoadedConfig } from '../config/types.js';
import { formatProblems } from '../config/format.js';
import type { EngineClient } from '../engine/ports.js';
import { importLeads } from '../leads/import.js';
import { readLeadFile } from '../leads/read-leads.js';
import type { Logger } from '../log/logger.js';
import { getCampaignByName, listCampaigns, setCampaignProblem, upsertCampaign } from '../store/campaigns.js';
import { lastCampaignEventData, recordEvent } from '../store/events.js';
import { readSuppressionFile } from '../leads/suppression-file.js';
import { suppressPendingLeads, syncSuppressions } from '../store/suppressions.js';
import type { Database } from '../store/types.js';
import { addConfigProblems, recordConfigProblems } from '../store/daemons.js';
import { judgeCampaignSuccesses } from '../store/variant-successes.js';
import type { VariableRule } from '../store/variable-match.js';

// Brings the store in line with the files: campaign rows, lead files, the do-not-call
// list. Runs at start and on SIGHUP; never stops a good campaign for a bad neighbour.

interface SyncDeps {
  now: number;
  logger: Logger;
}

/** Upserts every good campaign, and marks broken or removed ones with a problem. */
export async function syncCampaigns(
  db: Kysely<Database>,
  config: LoadedConfig,
  deps: SyncDeps & {
    client: EngineClient;
    /** Several accounts: the client of the campaign's account (its assistants are its own). */
    clientOf?: (cfg: CampaignConfig) => EngineClient;
    /**
     * 'when-needed' (several active instances): the assistants are listed only for a campaign
     * that is new, names another assistant, has no zone yet or had a problem. Every instance
     * syncs the same files at start and on SIGHUP, and listing an account's assistants spends
     * a request on a token another instance may be dialing at its full rate (a 429 there).
     * Default 'always'.
     */
    listAssistants?: 'always' | 'when-needed';
    /**
     * 'later' (the daemon): success_when's judging is returned, to run after dialing has
     * started; judging a changed rule over a large store takes minutes on PostgreSQL, and the
     * daemon must not wait for it to dial (status judges the calls itself meanwhile). Default 'now'.
     */
    judge?: 'now' | 'later';
  },
): Promise<SuccessJudging[]> {
  const { now, logger } = deps;
  type Assistants = Awaited<ReturnType<EngineClient['assistants']>>;
  // Each account's assistants listed once; null when the list could not be read.
  const lists = new Map<EngineClient, Promise<Assistants | null>>();
  const assistantsOf = (cfg: CampaignConfig): Promise<Assistants | null> => {
    const client = deps.clientOf?.(cfg) ?? deps.client;
    let list = lists.get(client);
    if (!list) {
      list = client.assistants().catch((err: unknown) => {
        logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'could not list assistants; campaign zones and assistants are checked later');
        return null;
      });
      lists.set(client, list);
    }
    return list;
  };
  const seen = new Set<string>();
  const judging: SuccessJudging[] = [];
  for (const cfg of config.campaigns) {
    seen.add(cfg.name);
    const existing = await getCampaignByName(db, cfg.name);
    const known =
      deps.listAssistants === 'when-needed' &&
      existing !== undefined &&
      Number(existing.assistant_id) === cfg.assistantId &&
      existing.problem === null &&
      (cfg.timezone ?? existing.timezone) !== null;
    const assistants = known ? null : await assistantsOf(cfg);
    const assistant = assistants?.find((a) => a.id === cfg.assistantId);
    const timezone = cfg.timezone ?? assistant?.timezone ?? existing?.timezone ?? null;
    const row = await upsertCampaign(db, cfg, { timezone }, now);
    // success_when judged again under the file's rule when it changed (or judgments are missing):
    // once per change, so that status reads kept successes, not every call's variables.
    if (cfg.variants && cfg.successWhen) {
      const previous = existing ? (JSON.parse(existing.config_json) as Partial<CampaignConfig>).successWhen : undefined;
      judging.push({ campaignId: row.id, campaign: cfg.name, rule: cfg.successWhen, ...(previous ? { previous } : {}) });
    }
    let problem: string | null = null;
    if (assistants && !assistant) problem = `assistant ${cfg.assistantId} is not one of this account's assistants`;
    else if (assistant && assistant.type !== 'outbound') problem = `assistant ${cfg.assistantId} is ${assistant.type}, not outbound`;
    else if (!timezone) problem = "no timezone: the campaign file sets none and the assistant's could not be read yet";
    await setCampaignProblem(db, row.id, problem, now);
    if (problem) logger.error({ campaign: cfg.name, problem }, 'campaign cannot dial');
  }
  for (const broken of config.brokenCampaigns) {
    seen.add(broken.name);
    const row = await getCampaignByName(db, broken.name);
    if (row) await setCampaignProblem(db, row.id, `campaign file ${broken.file} has errors (run "campaignd validate")`, now);
    logger.error({ campaign: broken.name, file: broken.file }, 'campaign file has errors; that campaign does not dial');
  }
  for (const row of await listCampaigns(db)) {
    if (!seen.has(row.name) && row.state !== 'completed') {
      await setCampaignProblem(db, row.id, 'its campaign file is gone from campaigns_dir', now);
    }
  }
  const errors = config.problems.filter((p) => p.severity === 'error');
  await recordConfigProblems(db, errors.length > 0 ? formatProblems(errors).split('\n').filter(Boolean) : []);
  if (deps.judge === 'later') return judging;
  await judgeSuccesses(db, judging, logger);
  return [];
}

/** A campaign's answered calls to judge under its success_when (syncCampaigns). */
export interface SuccessJudging {
  campaignId: number;
  campaign: string;
  rule: VariableRule;
  /** The rule the store had before this sync. */
  previous?: VariableRule;
}

/** Judges each campaign's answered calls under its rule, one campaign after the other; `stop` ends it between batches. */
export async function judgeSuccesses(db: Kysely<Database>, judging: readonly SuccessJudging[], logger: Logger, stop: () => boolean = () => false): Promise<void> {
  for (const job of judging) {
    if (stop()) return;
    const judged = await judgeCampaignSuccesses(db, job.campaignId, job.rule, job.previous, stop);
    if (judged > 0) logger.info({ campaign: job.campaign, results: judged }, 'call results judged under success_when');
  }
}

/** Imports each campaign's lead file when it changed since the last import. */
export async function syncLeadFiles(db: Kysely<Database>, config: LoadedConfig, deps: SyncDeps): Promise<void> {
  // A lead file that cannot be imported must reach `status`, not only the log: its lines
  // join the daemon's config problems (reset by syncCampaigns on every load).
  const failures: string[] = [];
  for (const cfg of config.campaigns) {
    const file = cfg.leads.file;
    if (!file) continue;
    const row = await getCampaignByName(db, cfg.name);
    if (!row) continue;
    let fingerprint: string;
    try {
      const s = await stat(file);
      // A changed lead_columns re-reads an unchanged file (its columns mean something else now).
      fingerprint = `${s.size}:${s.mtimeMs}${cfg.leadColumns ? `:${JSON.stringify(cfg.leadColumns)}` : ''}`;
    } catch {
      deps.logger.error({ campaign: cfg.name, file }, 'lead file cannot be read');
      failures.push(`${cfg.name}: lead file ${file} cannot be read — fix the path or the file and send SIGHUP; no lead was lost`);
      continue;
    }
    const last = await lastCampaignEventData(db, row.id, 'leads-imported');
    const lastData = last ? (JSON.parse(last) as { file?: string; fingerprint?: string }) : null;
    if (lastData?.file === file && lastData.fingerprint === fingerprint) continue;
    try {
      const summary = await importLeads(
        db,
        { id: row.id, allowDuplicates: cfg.allowDuplicates, defaultCountry: cfg.defaultCountry },
        // The same reader and mapping as `campaignd leads import` (CSV in any delimiter and encoding, .xlsx).
        readLeadFile(file, {
          defaultCountry: cfg.defaultCountry,
          allowDuplicates: cfg.allowDuplicates,
          ...(cfg.leadColumns ? { columns: cfg.leadColumns, columnsSource: `lead_columns in ${cfg.file}` } : {}),
        }),
        { now: deps.now, sourceFile: file },
      );
      await recordEvent(db, { at: deps.now, campaignId: row.id, kind: 'leads-imported', data: { file, fingerprint, ...summary, samples: undefined } });
      deps.logger.info(
        { campaign: cfg.name, read: summary.read, accepted: summary.accepted, updated: summary.updated, duplicates: summary.duplicates, invalid: summary.invalid },
        'lead file imported',
      );
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      deps.logger.error({ campaign: cfg.name, file, err: message }, 'lead file import failed; no lead was lost, fix the file and send SIGHUP');
      failures.push(`${cfg.name}: lead file not imported: ${message} — fix the file and send SIGHUP; no lead was lost`);
    }
  }
  if (failures.length > 0) await addConfigProblems(db, failures);
}

/** Loads the do-not-call list and suppresses active leads on it. */
export async function syncSuppressionList(db: Kysely<Database>, daemon: DaemonConfig, deps: SyncDeps): Promise<void> {
  if (!daemon.suppressionFile) {
    await syncSuppressions(db, [], deps.now);
    return;
  }
  const { numbers, problems } = await readSuppressionFile(daemon.suppressionFile);
  for (const p of problems.slice(0, 20)) deps.logger.warn({ file: daemon.suppressionFile, ...p }, 'suppression file line ignored');
  const { added, removed } = await syncSuppressions(db, numbers, deps.now);
  const suppressed = await suppressPendingLeads(db, deps.now);
  if (added || removed || suppressed) deps.logger.info({ added, removed, suppressed }, 'suppression list applied');
}
