// Reads the daemon file and every campaign file, and applies the rules that span files:
// files that must exist, duplicate campaign names, the daemon-wide call cap. Content problems
// are returned, never thrown; one broken campaign file never hides the others.
import { constants } from 'node:fs';
import { access, readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { parseCampaignSource, type CampaignParseResult } from './campaign.js';
import { parseDaemonFile } from './daemon.js';
import { hasErrors, ProblemSink } from './problems.js';
import type { FieldPath } from './source.js';
import type { CampaignConfig, ConfigProblem, DaemonConfig, LoadedConfig } from './types.js';
import { daemonAccounts } from './accounts.js';
import { applyCallingPolicy } from './calling-policy.js';
import { checkMoveTargets } from './on-result-links.js';

/** The daemon file cannot be read or parsed at all (`validate` exits 2). */
export class ConfigUnreadableError extends Error {
  constructor(
    message: string,
    /** The same, with file and line where known. */
    readonly problems: ConfigProblem[],
  ) {
    super(message);
    this.name = 'ConfigUnreadableError';
  }
}

const CAMPAIGN_FILE = /\.(ya?ml|json)$/i;

/** Load and check the whole configuration. Throws ConfigUnreadableError only for an unreadable daemon file. */
export async function loadConfig(configPath: string, env: Record<string, string | undefined>, options: { cwd?: string } = {}): Promise<LoadedConfig> {
  const cwd = options.cwd ?? process.cwd();
  const file = path.resolve(cwd, configPath);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    const reason = errnoText(err);
    const problem: ConfigProblem = { file, message: `cannot read the config file: ${reason}`, hint: 'pass --config FILE or set CAMPAIGND_CONFIG', severity: 'error' };
    throw new ConfigUnreadableError(`${file}: ${problem.message}`, [problem]);
  }
  const parsed = parseDaemonFile(file, text, env, cwd);
  if (!parsed.daemon) {
    const problems = parsed.syntaxErrors.map((e): ConfigProblem => ({ file, line: e.line, column: e.column, message: e.message, severity: 'error' }));
    throw new ConfigUnreadableError(`${file}: the config file does not parse`, problems);
  }
  const daemon = parsed.daemon;
  const daemonSink = new ProblemSink(file, { locate: parsed.locate });
  daemonSink.problems.push(...parsed.problems);
  if (daemon.suppressionFile) await requireFile(daemon.suppressionFile, ['suppression_file'], daemonSink);

  const results: CampaignParseResult[] = [];
  const unreadable: { name: string; file: string; problem: ConfigProblem }[] = [];
  for (const campaignFile of await listCampaignFiles(daemon.campaignsDir, daemonSink)) {
    let campaignText: string;
    try {
      campaignText = await readFile(campaignFile, 'utf8');
    } catch (err) {
      const name = path.basename(campaignFile).replace(CAMPAIGN_FILE, '');
      unreadable.push({ name, file: campaignFile, problem: { file: campaignFile, message: `cannot read the file: ${errnoText(err)}`, severity: 'error' } });
      continue;
    }
    const result = parseCampaignSource(campaignFile, campaignText);
    if (result.campaign) await campaignFileRules(result.campaign, result);
    results.push(result);
  }
  duplicateNames(results);
  checkMoveTargets(results);
  callCapRule(results, daemon.maxCallsInParallel);
  accountRule(results, daemon);
  await applyCallingPolicy(daemon, results, daemonSink);

  const problems: ConfigProblem[] = [...daemonSink.problems, ...unreadable.map((u) => u.problem)];
  const campaigns: CampaignConfig[] = [];
  const brokenCampaigns = unreadable.map(({ name, file: f }) => ({ name, file: f }));
  for (const r of results) {
    problems.push(...r.problems);
    if (r.campaign && !hasErrors(r.problems)) campaigns.push(r.campaign);
    else brokenCampaigns.push({ name: r.name, file: r.file });
  }
  return { daemon, campaigns, problems, brokenCampaigns, daemonSource: { locate: parsed.locate } };
}

/** Whether the daemon file itself (or the environment) has errors, so the daemon must not start. */
export function daemonConfigHasErrors(loaded: LoadedConfig): boolean {
  return daemonConfigErrors(loaded).length > 0;
}

/** The errors of the daemon file itself (and of the environment), which stop the daemon; a broken campaign file stops only its campaign. */
export function daemonConfigErrors(loaded: LoadedConfig): ConfigProblem[] {
  const campaignFiles = new Set([...loaded.campaigns.map((c) => c.file), ...loaded.brokenCampaigns.map((b) => b.file)]);
  return loaded.problems.filter((p) => p.severity === 'error' && !campaignFiles.has(p.file));
}

async function listCampaignFiles(dir: string, sink: ProblemSink): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (err) {
    sink.error(['campaigns_dir'], `cannot read the campaigns folder ${dir}: ${errnoText(err)}`, { hint: 'create the folder or fix campaigns_dir (relative to this file)' });
    return [];
  }
  const files = names.filter((n) => CAMPAIGN_FILE.test(n) && !n.startsWith('.')).sort();
  if (files.length === 0) sink.warning(['campaigns_dir'], `no campaign files (*.yaml, *.yml, *.json) in ${dir}`, { hint: 'add one file per campaign' });
  return files.map((n) => path.join(dir, n));
}

// The lead file must exist when the campaign names one.
async function campaignFileRules(campaign: CampaignConfig, result: CampaignParseResult): Promise<void> {
  if (!campaign.leads.file) return;
  const sink = new ProblemSink(campaign.file, result);
  await requireFile(campaign.leads.file, ['leads', 'file'], sink);
  result.problems.push(...sink.problems);
}

async function requireFile(file: string, field: FieldPath, sink: ProblemSink): Promise<void> {
  try {
    const info = await stat(file);
    if (!info.isFile()) throw Object.assign(new Error('not a file'), { code: 'EISDIR' });
    await access(file, constants.R_OK);
  } catch (err) {
    sink.error(field, `file ${file} cannot be read: ${errnoText(err)}`, { hint: `create it, or fix the path (relative paths start at ${path.dirname(sink.file)})` });
  }
}

function duplicateNames(results: CampaignParseResult[]): void {
  const byName = new Map<string, CampaignParseResult[]>();
  for (const r of results) byName.set(r.name, [...(byName.get(r.name) ?? []), r]);
  for (const [name, group] of byName) {
    if (group.length < 2) continue;
    for (const r of group) {
      const others = group.filter((o) => o !== r).map((o) => path.basename(o.file));
      const sink = new ProblemSink(r.file, r);
      sink.error(['name'], `the campaign name "${name}" is also used by ${others.join(', ')}`, { at: 'key', hint: 'set a different name: in all but one of these files' });
      r.problems.push(...sink.problems);
    }
  }
}

function callCapRule(results: CampaignParseResult[], cap: number | undefined): void {
  if (cap === undefined) return;
  for (const r of results) {
    if (!r.campaign || r.campaign.maxCallsInParallel <= cap) continue;
    const sink = new ProblemSink(r.campaign.file, r);
    sink.warning(['max_calls_in_parallel'], `${r.campaign.maxCallsInParallel} is above the daemon's max_calls_in_parallel (${cap}), which caps it`, {
      hint: `lower it to ${cap} or raise the daemon's cap`,
    });
    r.problems.push(...sink.problems);
  }
}

/** A campaign names an account the daemon file has; with several accounts it must name one. */
function accountRule(results: CampaignParseResult[], daemon: DaemonConfig): void {
  const names = daemonAccounts(daemon).map((a) => a.name);
  const several = names.length > 1;
  for (const r of results) {
    if (!r.campaign) continue;
    const sink = new ProblemSink(r.campaign.file, r);
    const named = r.campaign.account;
    if (named === undefined) {
      if (several) sink.error(['account'], `missing field "account": the daemon file (${daemon.file}) lists ${names.length} accounts`, { at: 'key', hint: `add account: with one of ${names.join(', ')}` });
    } else if (!names.includes(named)) {
      const hint = daemon.accounts ? `use one of ${names.join(', ')}, or add "${named}" to accounts: in ${daemon.file}` : `remove account:, or list the accounts under accounts: in ${daemon.file} (README, "Many accounts")`;
      sink.error(['account'], `unknown account "${named}"`, { hint });
    }
    r.problems.push(...sink.problems);
  }
}

function errnoText(err: unknown): string {
  const code = (err as { code?: string }).code;
  if (code === 'ENOENT') return 'no such file or folder';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'EISDIR') return 'it is a folder, not a file';
  if (code === 'ENOTDIR') return 'not a folder';
  return err instanceof Error ? err.message : String(err);
}
