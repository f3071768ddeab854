import type { Kysely } from 'kysely';
import { extractedPage, variablesPage, type ExportScope } from '../store/results-export.js';
import type { Database } from '../store/types.js';

// The export's first pass: the names of the leads' own columns (variables) and of every
// extracted variable seen in the exported campaigns, read a page at a time so that only
// the names stay in memory.

/** The fixed columns of docs/design.md §9, in this order. */
export const FIXED_COLUMNS = [
  'campaign',
  'lead_id',
  'phone_number',
  'state',
  'state_reason',
  'attempts',
  'last_outcome',
  'last_call_status',
  'answered_by',
  'duration_seconds',
  'started_at',
  'ended_at',
  'times_from',
  'cost',
  'recording_url',
  // Last, so that readers of the columns before them keep their positions.
  'variant',
  'callback_asked',
  'callback_state',
  'callback_scheduled_at',
  'callback_refused_reason',
  'callback_call',
] as const;

const PAGE = 5000;

export interface ColumnNames {
  variables: string[];
  extracted: string[];
}

/** Collects the variable and extracted-variable names of the scope, sorted by first appearance. */
export async function collectColumnNames(db: Kysely<Database>, scope: ExportScope): Promise<ColumnNames> {
  const variables = new Set<string>();
  for (let after = 0; ; ) {
    const rows = await variablesPage(db, scope, after, PAGE);
    for (const r of rows) for (const k of objectKeys(r.variables_json)) variables.add(k);
    if (rows.length < PAGE) break;
    after = rows.at(-1)!.id;
  }
  const extracted = new Set<string>();
  for (let after = 0; ; ) {
    const rows = await extractedPage(db, scope.campaignIds, after, PAGE);
    for (const r of rows) for (const k of objectKeys(r.extracted_json)) extracted.add(k);
    if (rows.length < PAGE) break;
    after = rows.at(-1)!.attempt_id;
  }
  return { variables: [...variables], extracted: [...extracted] };
}

/** The keys of a stored JSON object; none when it is not one. */
function objectKeys(json: string): string[] {
  const value = parseObject(json);
  return value ? Object.keys(value) : [];
}

/** A stored JSON object, or null (absent, not an object, unreadable). */
export function parseObject(json: string | null): Record<string, unknown> | null {
  if (json === null || json === '{}') return null;
  try {
    const v = JSON.parse(json) as unknown;
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** The header: fixed columns, the leads' own columns (`lead.NAME` where a name is taken), `extracted.NAME`. */
export function headerOf(names: ColumnNames): string[] {
  const fixed = new Set<string>(FIXED_COLUMNS);
  return [...FIXED_COLUMNS, ...names.variables.map((n) => (fixed.has(n) ? `lead.${n}` : n)), ...names.extracted.map((n) => `extracted.${n}`)];
}
