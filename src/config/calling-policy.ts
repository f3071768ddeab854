// Completes each campaign's callingPolicy at load time (docs/design.md §11): the daemon's rules
// file and cap, then the campaign's own. The result travels in the campaign's stored
// config, so the engine, explain and validate --preview all judge by the same rules.
import type { CampaignParseResult } from './campaign.js';
import type { ProblemSink } from './problems.js';
import type { DaemonConfig } from './types.js';
import { readRulesFile } from './calling-rules.js';
import type { AttemptCap, RegionRule } from '../rules/types.js';

export async function applyCallingPolicy(daemon: DaemonConfig, results: CampaignParseResult[], daemonSink: ProblemSink): Promise<void> {
  const common: { rules: RegionRule[]; caps: AttemptCap[] } = { rules: [], caps: [] };
  if (daemon.callingRulesFile) {
    const read = await readRulesFile(daemon.callingRulesFile);
    daemonSink.problems.push(...read.problems.map((p) => (p.file === daemon.callingRulesFile && p.line === undefined ? { ...p, field: 'calling_rules' } : p)));
    common.rules.push(...(read.rules ?? []));
  }
  if (daemon.maxAttemptsPerNumber) common.caps.push({ ...daemon.maxAttemptsPerNumber, origin: 'daemon max_attempts_per_number' });
  const byFile = new Map<string, Awaited<ReturnType<typeof readRulesFile>>>();
  for (const r of results) {
    const c = r.campaign;
    if (!c) continue;
    const own = c.callingPolicy ?? { rules: [], caps: [] };
    const rules = [...common.rules];
    if (c.callingRulesFile) {
      let read = byFile.get(c.callingRulesFile);
      if (!read) {
        read = await readRulesFile(c.callingRulesFile);
        byFile.set(c.callingRulesFile, read);
      }
      // A broken rules file stops the campaign that names it (calling without its rules could
      // break them), and only that campaign: its problems are reported on the campaign's
      // calling_rules field, with the rules file's own position in the message.
      const line = r.locate(['calling_rules'], 'value');
      for (const p of read.problems) {
        const where = `${p.file}${p.line !== undefined ? `:${p.line}` : ''}${p.field ? ` (${p.field})` : ''}`;
        r.problems.push({ file: c.file, ...(line ? { line: line.line, column: line.column } : {}), field: 'calling_rules', message: `${where}: ${p.message}`, ...(p.hint ? { hint: p.hint } : {}), severity: p.severity });
      }
      rules.push(...(read.rules ?? []));
    }
    const caps = [...common.caps, ...own.caps];
    if (rules.length > 0 || caps.length > 0) c.callingPolicy = { rules, caps };
    else delete c.callingPolicy;
  }
}
