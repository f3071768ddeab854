// The on_result rules that span campaign files: every `move_to` must name a campaign of
// campaigns_dir, and following `move_to` from campaign to campaign must never come back
// (a lead could otherwise move around a loop forever). Both are errors of the file that
// holds the rule.
import type { CampaignParseResult } from './campaign.js';
import { ProblemSink } from './problems.js';
import { didYouMean } from './suggest.js';

interface Edge {
  from: CampaignParseResult;
  to: string;
  rule: number;
}

/** Adds a problem to each campaign whose move_to names an unknown campaign or closes a cycle. */
export function checkMoveTargets(results: CampaignParseResult[]): void {
  const names = results.map((r) => r.name);
  const edges: Edge[] = [];
  for (const r of results) {
    for (const [i, rule] of (r.campaign?.onResult ?? []).entries()) {
      if (rule.then.kind === 'move-to') edges.push({ from: r, to: rule.then.campaign, rule: i });
    }
  }
  const reported = new Set<Edge>();
  for (const edge of edges) {
    if (names.includes(edge.to)) continue;
    const guess = didYouMean(edge.to, names);
    report(edge, `names campaign "${edge.to}", which is not in campaigns_dir`, guess ? `did you mean "${guess}"?` : `use one of ${names.join(', ')}`);
    reported.add(edge);
  }
  for (const edge of edges) {
    if (reported.has(edge)) continue;
    const path = pathBack(edges, edge.to, edge.from.name);
    if (!path) continue;
    report(edge, `makes a cycle: ${[edge.from.name, ...path].join(' → ')}`, 'a lead must not move back to a campaign it came from; end one of these rules with complete or retry_in instead');
  }
}

/** The campaigns from `start` to `goal` along move_to rules, or undefined when there is no way. */
function pathBack(edges: Edge[], start: string, goal: string): string[] | undefined {
  const seen = new Set<string>();
  const walk = (at: string): string[] | undefined => {
    if (at === goal) return [at];
    if (seen.has(at)) return undefined;
    seen.add(at);
    for (const e of edges) {
      if (e.from.name !== at) continue;
      const rest = walk(e.to);
      if (rest) return [at, ...rest];
    }
    return undefined;
  };
  return walk(start);
}

function report(edge: Edge, message: string, hint: string): void {
  const sink = new ProblemSink(edge.from.file, edge.from);
  sink.error(['on_result', edge.rule, 'then', 'move_to'], message, { hint });
  edge.from.problems.push(...sink.problems);
}
