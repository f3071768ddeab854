import type { Kysely } from 'kysely';
import { exportAttemptsOf, exportChangedLeadPage, exportLeadPage, type ChangeCursor, type ExportAttemptRow, type ExportLeadRow, type ExportScope } from '../store/results-export.js';
import type { Database } from '../store/types.js';
import { hasMigration } from '../store/migrate.js';
import { VARIANTS_MIGRATION } from '../store/variants.js';
import { anyCallbacks, CALLBACKS_MIGRATION } from '../store/callbacks.js';
import { collectColumnNames, headerOf, parseObject, type ColumnNames } from './columns.js';
import { callTimes, type TimesFrom } from './call-times.js';
import { cellText, csvRecord, UTF8_BOM } from './csv.js';

// `campaignd results`: one record per lead, streamed: a page of leads is read, written
// and dropped before the next is read, so memory stays flat at any number of leads.

export type ExportFormat = 'csv' | 'jsonl';

export interface ExportOptions {
  format: ExportFormat;
  scope: ExportScope;
  /** Campaign names by id. */
  campaignNames: ReadonlyMap<number, string>;
  /** Start a CSV with a UTF-8 byte order mark (default true; see csv.ts). */
  bom?: boolean;
  /** Leads per page (default 1000 for CSV, 200 for JSONL, which carries transcripts). */
  pageSize?: number;
  /**
   * The change feed instead of the id order (JSONL only): leads changed after `after` and
   * at or before `until`, by (changed_at, id); each line carries its `cursor` (cursorText).
   */
  feed?: { after: ChangeCursor; until: number };
}

/** A feed position as the API shows it: "CHANGED_AT_MS.LEAD_ID" (clients keep it as an opaque string). */
export function cursorText(c: ChangeCursor): string {
  return `${c.changedAt}.${c.leadId}`;
}

/** The inverse of cursorText; null when `text` is not one. */
export function parseCursor(text: string): ChangeCursor | null {
  const m = /^(\d{1,15})\.(\d{1,15})$/.exec(text);
  return m ? { changedAt: Number(m[1]), leadId: Number(m[2]) } : null;
}

/** Where the export goes: resolves once the text was taken (waits on backpressure). */
export type ExportSink = (text: string) => Promise<void>;

/** Writes the export; returns how many leads it holds. */
export async function exportResults(db: Kysely<Database>, opts: ExportOptions, sink: ExportSink): Promise<{ leads: number; columns: string[] }> {
  const jsonl = opts.format === 'jsonl';
  // JSONL names its fields in each line: the first pass over the scope is for CSV's header.
  const names = jsonl ? { variables: [], extracted: [] } : await collectColumnNames(db, opts.scope);
  const header = headerOf(names);
  const buffered = bufferedSink(sink);
  const feed = jsonl ? opts.feed : undefined;
  if (!jsonl) await buffered.write(`${opts.bom === false ? '' : UTF8_BOM}${csvRecord(header)}`);
  const pageSize = opts.pageSize ?? (jsonl ? 200 : 1000);
  const variants = await hasMigration(db, VARIANTS_MIGRATION);
  // Only where callbacks were asked: the export of other campaigns does without the join.
  const callbacks = (await hasMigration(db, CALLBACKS_MIGRATION)) && (await anyCallbacks(db, opts.scope.campaignIds));
  let leads = 0;
  let after = 0;
  let afterChange = feed?.after;
  for (;;) {
    const page = feed ? await exportChangedLeadPage(db, opts.scope, afterChange!, feed.until, pageSize, { variants }) : await exportLeadPage(db, opts.scope, after, pageSize, { variants });
    if (page.length === 0) break;
    const ids = page.map((l) => l.lead_id);
    const range = feed ? { leadIds: ids } : {};
    const attempts = groupByLead(await exportAttemptsOf(db, Math.min(...ids), Math.max(...ids), { texts: jsonl, campaignIds: opts.scope.campaignIds, callbacks, ...range }));
    for (const lead of page) {
      const campaign = opts.campaignNames.get(lead.campaign_id) ?? String(lead.campaign_id);
      const history = attempts.get(lead.lead_id) ?? [];
      const cursor = feed ? cursorText({ changedAt: lead.changed_at!, leadId: lead.lead_id }) : undefined;
      await buffered.write(jsonl ? jsonLine(lead, campaign, history, cursor) : csvLine(lead, campaign, history, names));
    }
    leads += page.length;
    const last = page.at(-1)!;
    after = last.lead_id;
    afterChange = { changedAt: last.changed_at ?? 0, leadId: last.lead_id };
    if (page.length < pageSize) break;
  }
  await buffered.flush();
  return { leads, columns: header };
}

/** The fields every format shares, from a lead and its attempts (the last one tried speaks for the call). */
function summary(lead: ExportLeadRow, campaign: string, history: readonly ExportAttemptRow[]) {
  const last = history.at(-1);
  let counted = 0;
  for (const a of history) counted += Number(a.counted) === 1 ? 1 : 0;
  return {
    campaign,
    lead_id: lead.lead_id,
    phone_number: last?.phone_number ?? lead.phone_number,
    state: lead.state,
    state_reason: lead.state_reason,
    attempts: counted,
    last_outcome: last?.outcome ?? null,
    last_call_status: last ? (last.result_status ?? last.call_status) : null,
    answered_by: last ? (last.answered_by ?? last.result_answered_by) : null,
    duration_seconds: last?.duration_seconds ?? null,
    ...timeFields(last),
    cost: last?.cost ?? null,
    recording_url: last?.recording_url ?? null,
    variant: lead.variant,
    ...callbackFields(last),
  };
}

/** What a call asked of callbacks (README, "Callbacks the person asks for"), and whether it was a callback's own call. */
function callbackFields(a: ExportAttemptRow | undefined) {
  return {
    callback_asked: a?.callback_asked ?? null,
    callback_state: a?.callback_state ?? null,
    callback_scheduled_at: iso(a?.callback_due_at ?? null),
    callback_refused_reason: a?.callback_refused_reason ?? null,
    callback_call: a ? Number(a.callback_call) === 1 : false,
  };
}

function csvLine(lead: ExportLeadRow, campaign: string, history: readonly ExportAttemptRow[], names: ColumnNames): string {
  const fixed = Object.values(summary(lead, campaign, history)).map(cellText);
  const variables = parseObject(lead.variables_json) ?? {};
  const extracted = parseObject(history.at(-1)?.extracted_json ?? null) ?? {};
  return csvRecord([...fixed, ...names.variables.map((n) => cellText(variables[n])), ...names.extracted.map((n) => cellText(extracted[n]))]);
}

/**
 * One JSONL line. Stored JSON (variables, transcript, extracted variables, evaluation) is
 * spliced in as the text it is, never parsed and serialised again: at a million leads
 * that round trip was a third of the export's time.
 */
function jsonLine(lead: ExportLeadRow, campaign: string, history: readonly ExportAttemptRow[], cursor?: string): string {
  const last = history.at(-1);
  const head = JSON.stringify(cursor === undefined ? summary(lead, campaign, history) : { cursor, ...summary(lead, campaign, history) });
  return (
    `${head.slice(0, -1)},"variables":${rawObject(lead.variables_json)},"extracted":${rawObject(last?.extracted_json ?? null)}` +
    `,"evaluation":${last?.evaluation_json ?? 'null'},"transcript":${last?.transcript_json ?? 'null'}` +
    `,"attempt_history":[${history.map(attemptJson).join(',')}]}\n`
  );
}

function attemptJson(a: ExportAttemptRow): string {
  const plain = {
    attempt_id: a.id,
    phone_number: a.phone_number,
    contact_position: a.contact_position,
    state: a.state,
    outcome: a.outcome,
    outcome_source: a.outcome_source,
    call_id: a.call_id,
    call_status: a.result_status ?? a.call_status,
    answered_by: a.answered_by ?? a.result_answered_by,
    sent_at: iso(a.sent_at ?? a.created_at),
    ...timeFields(a),
    duration_seconds: a.duration_seconds,
    cost: a.cost,
    recording_url: a.recording_url,
    result_source: a.source,
    ...callbackFields(a),
  };
  const text = JSON.stringify(plain);
  return `${text.slice(0, -1)},"transcript":${a.transcript_json ?? 'null'},"extracted":${rawObject(a.extracted_json)},"evaluation":${a.evaluation_json ?? 'null'}}`;
}

/** Stored JSON of an object as it is; `{}` when absent. (campaignd wrote it with JSON.stringify.) */
function rawObject(text: string | null): string {
  return text === null || text === '' ? '{}' : text;
}

function groupByLead(rows: ExportAttemptRow[]): Map<number, ExportAttemptRow[]> {
  const out = new Map<number, ExportAttemptRow[]>();
  for (const r of rows) {
    const list = out.get(r.lead_id);
    if (list) list.push(r);
    else out.set(r.lead_id, [r]);
  }
  return out;
}

/** started_at, ended_at and the clock both came from (call-times.ts): never one end from each. */
function timeFields(a: ExportAttemptRow | undefined): { started_at: string | null; ended_at: string | null; times_from: TimesFrom | null } {
  if (!a) return { started_at: null, ended_at: null, times_from: null };
  const t = callTimes(a);
  return { started_at: iso(t.startedAt), ended_at: iso(t.endedAt), times_from: t.from };
}

function iso(ms: number | null): string | null {
  return ms === null || ms === undefined ? null : new Date(Number(ms)).toISOString();
}

/** Joins small writes into ~64 KB ones. */
function bufferedSink(sink: ExportSink): { write(text: string): Promise<void>; flush(): Promise<void> } {
  let parts: string[] = [];
  let size = 0;
  const flush = async (): Promise<void> => {
    if (parts.length === 0) return;
    const text = parts.join('');
    parts = [];
    size = 0;
    await sink(text);
  };
  return {
    async write(text) {
      parts.push(text);
      size += text.length;
      if (size >= 64 * 1024) await flush();
    },
    flush,
  };
}
