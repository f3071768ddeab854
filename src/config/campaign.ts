// One campaign file: as written → checked against CAMPAIGN_SPEC → normalised CampaignConfig.
// Pure (no file system) so that tests and the SIGHUP reload can call it on text.
import path from 'node:path';
import type { LeadColumns } from '../leads/columns.js';
import { CAMPAIGN_NAME_PATTERN, CAMPAIGN_SPEC, DEFAULT_ASSUMED_COST_PER_CALL } from './campaign-spec.js';
import { readOnResult } from './on-result.js';
import { ProblemSink, sortByPosition } from './problems.js';
import { parseSource, type ParsedSource } from './source.js';
import { checkValue } from './spec.js';
import { WEEKDAY_NAMES, type CampaignConfig, type ConfigProblem, type RetryableClass, type Weekday, type WeekdayName } from './types.js';

/** Campaign name a file gets when it sets none: its base name without extension. */
export function defaultCampaignName(file: string): string {
  return path.basename(file).replace(/\.(ya?ml|json)$/i, '');
}

/** Parse and check one campaign file's text; `campaign` is set only when there is no error. */
export function parseCampaignFile(file: string, text: string): { campaign?: CampaignConfig; problems: ConfigProblem[] } {
  const { campaign, problems } = parseCampaignSource(file, text);
  return campaign ? { campaign, problems } : { problems };
}

export interface CampaignParseResult {
  campaign?: CampaignConfig;
  problems: ConfigProblem[];
  /** The campaign's name as far as it is known (written, else from the file name). */
  name: string;
  /** Absolute path of the campaign file. */
  file: string;
  locate: ParsedSource['locate'];
}

/** parseCampaignFile plus what the loader needs for cross-file checks. */
export function parseCampaignSource(file: string, text: string): CampaignParseResult {
  const absolute = path.resolve(file);
  const source = parseSource(absolute, text);
  const sink = new ProblemSink(absolute, source);
  const fallbackName = defaultCampaignName(absolute);
  const done = (campaign?: CampaignConfig): CampaignParseResult => {
    const result: CampaignParseResult = { problems: sortByPosition(sink.problems), name: campaign?.name ?? writtenName(source.value) ?? fallbackName, file: absolute, locate: source.locate };
    if (campaign) result.campaign = campaign;
    return result;
  };
  if (source.syntaxErrors.length > 0) {
    for (const e of source.syntaxErrors) {
      sink.problems.push({ file: absolute, line: e.line, column: e.column, message: e.message, hint: 'fix the syntax; other checks run once the file parses', severity: 'error' });
    }
    return done();
  }
  if (source.value === undefined || source.value === null) {
    sink.error([], 'the file is empty', { hint: 'write the campaign fields, see config/campaigns/demo.yaml' });
    return done();
  }
  const written = checkValue(CAMPAIGN_SPEC, source.value, [], sink) as Record<string, unknown> | undefined;
  if (!written) return done();

  const name = (written.name as string | undefined) ?? defaultCampaignName(absolute);
  if (written.name === undefined && !CAMPAIGN_NAME_PATTERN.test(name)) {
    sink.error([], `the file name gives the campaign name ${JSON.stringify(name)}, which has characters not allowed in names`, {
      hint: 'rename the file or set name: using letters, digits, ".", "_" or "-"',
    });
  }
  crossFieldRules(written, source.value as Record<string, unknown>, sink);
  const onResult = readOnResult(written, sink);
  if (sink.hasErrors) return done();

  const leads = written.leads as { file?: string; remote_campaign_id?: number };
  const days = [...new Set((written.allowed_days as WeekdayName[]).map((d) => (WEEKDAY_NAMES.indexOf(d) + 1) as Weekday))].sort((a, b) => a - b);
  const local = written.lead_local_hours as { start: number; end: number } | undefined;
  const campaign: CampaignConfig = {
    name,
    file: absolute,
    assistantId: (written.assistant_id as number | undefined) ?? (written.assistants as { id: number }[])[0]!.id,
    allowedDays: days,
    allowedHoursStart: written.allowed_hours_start_time as number,
    allowedHoursEnd: written.allowed_hours_end_time as number,
    maxCallsInParallel: written.max_calls_in_parallel as number,
    maxRetries: written.max_retries as number,
    retryIntervalSeconds: written.retry_interval as number,
    markCompleteWhenNoLeads: written.mark_complete_when_no_leads as boolean,
    retryOn: [...new Set(written.retry_on as RetryableClass[])],
    blackoutDates: [...new Set(written.blackout_dates as string[])].sort(),
    initialStatus: written.status as 'running' | 'paused',
    leads: leads.file !== undefined ? { file: path.resolve(path.dirname(absolute), leads.file) } : { remoteCampaignId: leads.remote_campaign_id as number },
    allowDuplicates: written.allow_duplicates as boolean,
  };
  if (written.account !== undefined) campaign.account = written.account as string;
  if (written.timezone !== undefined) campaign.timezone = written.timezone as string;
  if (local) campaign.leadLocalHours = { start: local.start, end: local.end };
  if (written.default_country !== undefined) campaign.defaultCountry = written.default_country as string;
  if (written.lead_columns !== undefined) campaign.leadColumns = written.lead_columns as LeadColumns;
  sectionElevenFields(campaign, written, absolute);
  const predial = written.predial as { url: string; secret_env: string; timeout_ms: number } | undefined;
  if (predial) campaign.predial = { url: predial.url, secretEnv: predial.secret_env, timeoutMs: predial.timeout_ms };
  if (onResult) campaign.onResult = onResult;
  if (written.extracted_variables !== undefined) campaign.extractedVariables = [...new Set(written.extracted_variables as string[])];
  variantFields(campaign, written);
  const callbacks = written.callbacks as { variable: string; max_per_lead: number; horizon_days: number } | undefined;
  if (callbacks) campaign.callbacks = { variable: callbacks.variable, maxPerLead: callbacks.max_per_lead, horizonDays: callbacks.horizon_days };
  const budget = written.budget as { max_cost?: number; max_cost_per_day?: number; assumed_cost_per_call?: number } | undefined;
  if (budget) {
    campaign.budget = { maxCost: budget.max_cost ?? null, maxCostPerDay: budget.max_cost_per_day ?? null, assumedCostPerCall: budget.assumed_cost_per_call ?? DEFAULT_ASSUMED_COST_PER_CALL };
  }
  return done(campaign);
}

// Who may be called (docs/design.md §11): opt_out as given; calling_rules and max_attempts_per_number become the
// campaign's part of callingPolicy, which loadConfig completes with the rules files' content
// and the daemon's own rules and cap.
function sectionElevenFields(campaign: CampaignConfig, written: Record<string, unknown>, file: string): void {
  const optOut = written.opt_out as { variable: string; values: string[] } | undefined;
  if (optOut) campaign.optOut = { variable: optOut.variable, values: [...new Set(optOut.values)] };
  const cap = written.max_attempts_per_number as { count: number; window_hours: number } | undefined;
  const rulesFile = written.calling_rules as string | undefined;
  if (!cap && rulesFile === undefined) return;
  campaign.callingPolicy = { rules: [], caps: cap ? [{ count: cap.count, windowHours: cap.window_hours, origin: 'campaign max_attempts_per_number' }] : [] };
  if (rulesFile !== undefined) campaign.callingRulesFile = path.resolve(path.dirname(file), rulesFile);
}

// Assistant variants (README, "Assistant variants"): the list in file order, success_when's values as one list.
function variantFields(campaign: CampaignConfig, written: Record<string, unknown>): void {
  const assistants = written.assistants as { id: number; weight: number; name: string }[] | undefined;
  if (assistants) campaign.variants = assistants.map((a) => ({ name: a.name, assistantId: a.id, weight: a.weight }));
  const when = written.success_when as { variable: string; in?: string[]; equals?: string } | undefined;
  if (when) campaign.successWhen = { variable: when.variable, values: [...new Set(when.in ?? [when.equals!])] };
}

function writtenName(value: unknown): string | undefined {
  const name = (value as { name?: unknown } | null | undefined)?.name;
  return typeof name === 'string' && name.trim() !== '' ? name.trim() : undefined;
}

// Rules that involve more than one field, or that are legal but almost certainly a mistake.
function crossFieldRules(written: Record<string, unknown>, raw: Record<string, unknown>, sink: ProblemSink): void {
  const days = written.allowed_days as string[] | undefined;
  if (days && new Set(days).size !== days.length) {
    sink.warning(['allowed_days'], 'lists a day more than once', { hint: 'list each day once' });
  }
  const local = written.lead_local_hours as { start?: number; end?: number } | undefined;
  if (local?.start !== undefined && local.start === local.end) {
    sink.warning(['lead_local_hours'], 'start equals end, which allows the whole day and so restricts nothing', {
      at: 'key',
      hint: 'set the hours people may be called, e.g. start "08:00:00", end "21:00:00"',
    });
  }
  const leadsFrom = written.leads as { file?: string } | undefined;
  if (written.lead_columns !== undefined && leadsFrom && leadsFrom.file === undefined) {
    sink.warning(['lead_columns'], 'applies to a lead file, and this campaign reads its leads from the service', { at: 'key', hint: 'remove lead_columns, or use leads.file' });
  }
  const assistants = written.assistants as { name?: string }[] | undefined;
  const seen = new Set<string>();
  for (const [i, a] of (assistants ?? []).entries()) {
    if (a?.name === undefined) continue;
    if (seen.has(a.name)) sink.error(['assistants', i, 'name'], `names the variant "${a.name}" a second time`, { hint: 'give each variant its own name: it tells the variants apart in status and results' });
    seen.add(a.name);
  }
  if (written.success_when !== undefined && written.assistants === undefined) {
    sink.warning(['success_when'], 'applies to assistant variants, and this campaign has one assistant', { at: 'key', hint: 'list assistants: with their weights, or remove success_when' });
  }
  const budget = written.budget as { max_cost?: number; max_cost_per_day?: number } | undefined;
  if (budget && budget.max_cost === undefined && budget.max_cost_per_day === undefined) {
    sink.error(['budget'], 'sets no cap', { at: 'key', hint: 'set max_cost (all calls) or max_cost_per_day (per day), e.g. max_cost: 250.00' });
  }
  if (budget?.max_cost !== undefined && budget.max_cost_per_day !== undefined && budget.max_cost_per_day > budget.max_cost) {
    sink.warning(['budget', 'max_cost_per_day'], `${budget.max_cost_per_day} is more than max_cost ${budget.max_cost}, so only max_cost limits spending`, { hint: 'lower max_cost_per_day, or remove it' });
  }
  const callbacks = written.callbacks as { variable?: string } | undefined;
  if (callbacks?.variable !== undefined) {
    const declared = written.extracted_variables as string[] | undefined;
    if (callbacks.variable.trim() === '') sink.error(['callbacks', 'variable'], 'is empty', { hint: 'name the extracted variable that carries the asked time, e.g. variable: callback_at' });
    else if (declared && !declared.includes(callbacks.variable)) {
      sink.warning(['callbacks', 'variable'], `"${callbacks.variable}" is not one of extracted_variables, so no callback may ever be read`, { hint: `use one of ${declared.join(', ')}, or add it to extracted_variables` });
    }
  }
  const retryOn = written.retry_on as string[] | undefined;
  if (raw.max_retries !== undefined && written.max_retries !== 0 && retryOn?.length === 0) {
    sink.warning(['retry_on'], 'is empty, so max_retries has no effect', { hint: 'list the outcomes to retry, or set max_retries: 0' });
  }
}
