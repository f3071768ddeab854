import { formatValue, type Figure } from './figures.js';
import { markdownTable } from './table.js';

// The figures issue 12 compares, SQLite next to PostgreSQL, picked from what `npm run bench`
// collected (each figure stamped with the dialect its run used). A figure a run did not
// produce shows as "—"; one a dialect cannot have says why.

/** Which collected figure fills a cell: its benchmark and its name (or a pattern of it). */
interface Pick {
  bench: string;
  name: string | RegExp;
}

interface Row {
  figure: string;
  sqlite: Pick | { none: string };
  postgres: Pick;
}

const same = (bench: string, name: string | RegExp): { sqlite: Pick; postgres: Pick } => ({ sqlite: { bench, name }, postgres: { bench, name } });

const ROWS: Row[] = [
  { figure: 'engine throughput ratio (engine ÷ plain client)', ...same('engine-throughput', 'throughput ratio engine ÷ client') },
  { figure: 'engine: calls placed per second', ...same('engine-throughput', 'engine placed calls/s') },
  { figure: 'slot refill after a webhook, p99 (10 calls at once, ×10)', ...same('engine-calls', 'slot refill after webhook p99') },
  { figure: 'utilization (service side), webhooks, 60 s calls', ...same('engine-calls', /^utilization \(service side\), webhooks/) },
  { figure: 'claim p99 (next due lead + claim), big store', ...same('engine-claim', 'claim (dueLeads + claimAttempt) p99') },
  { figure: 'next due lead with zones, rules and caps, p99 (docs/design.md §11)', ...same('who-claim', 'next due lead with zones, rules and caps, p99') },
  { figure: '… and its claim committed, p99', ...same('who-claim', 'claim including the durable commit, p99') },
  { figure: 'collectStatus, big store, 100 campaigns (worst)', ...same('engine-claim', 'status (collectStatus, whole DB)') },
  // The big store's line: every status figure but the 1,000-lead one.
  { figure: '`campaignd status`, whole process, big store (median)', ...same('status', /^campaignd status, whole command, (?!1,000 leads)[\d,]+ leads \(median\)$/) },
  { figure: '`campaignd status`, whole process, 1,000 leads (median)', ...same('status', 'campaignd status, whole command, 1,000 leads (median)') },
  {
    figure: 'lead import, whole command',
    sqlite: { bench: 'import-leads', name: 'leads import, whole command' },
    postgres: { bench: 'import-leads-postgres', name: /^import \(/ },
  },
  {
    figure: 'lead re-import (unchanged), whole command',
    sqlite: { bench: 'import-leads', name: 'leads re-import (unchanged), whole command' },
    postgres: { bench: 'import-leads-postgres', name: /^re-import \(/ },
  },
  { figure: 'takeover after SIGKILL of the active instance, worst', sqlite: { none: 'n/a: one daemon per file' }, postgres: { bench: 'takeover', name: 'takeover after SIGKILL, worst' } },
  { figure: 'takeover after SIGKILL, median', sqlite: { none: 'n/a' }, postgres: { bench: 'takeover', name: 'takeover after SIGKILL, median' } },
  { figure: 'takeover after SIGSTOP past the lease', sqlite: { none: 'n/a' }, postgres: { bench: 'takeover', name: 'takeover after SIGSTOP past the lease' } },
];

function find(figures: readonly Figure[], dialect: 'sqlite' | 'postgres', pick: Pick): Figure | undefined {
  return figures.find(
    (f) => (f.dialect ?? 'sqlite') === dialect && f.bench === pick.bench && (typeof pick.name === 'string' ? f.name === pick.name : pick.name.test(f.name)),
  );
}

function cell(f: Figure | undefined): string {
  if (!f) return '—';
  const verdict = f.pass === null ? '' : f.pass ? ' PASS' : ' MISS';
  return `${formatValue(f.value)} ${f.unit}`.trim() + verdict;
}

/** One goal when both dialects share it (or only one has a figure), else each dialect's. */
function goalText(sqlite: string | undefined, postgres: string | undefined): string {
  if (sqlite && postgres) return sqlite === postgres ? sqlite : `SQLite ${sqlite}; PostgreSQL ${postgres}`;
  if (sqlite) return `${sqlite} (SQLite)`;
  if (postgres) return postgres;
  return '—';
}

/** The side-by-side Markdown table: figure, SQLite, PostgreSQL, goal (each dialect's when they differ). */
export function sideBySideTable(figures: readonly Figure[]): string {
  const rows = ROWS.map((row) => {
    const s = 'none' in row.sqlite ? undefined : find(figures, 'sqlite', row.sqlite);
    const p = find(figures, 'postgres', row.postgres);
    return [row.figure, 'none' in row.sqlite ? row.sqlite.none : cell(s), cell(p), goalText(s?.goal, p?.goal)];
  });
  return markdownTable(['figure', 'SQLite', 'PostgreSQL', 'goal'], rows);
}
