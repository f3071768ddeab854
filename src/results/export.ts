import type { Kysely } from 'kysely';
import { exportAttemptsOf, exportLeadPage, type ExportAttemptRow, type ExportLeadRow, type ExportScope } from '../store/results-export.js';
import { parseStoredJson } from '../store/results.js';
import type { Database } from '../store/types.js';
import { collectColumnNames, headerOf, parseObject, type ColumnNames } from './columns.js';
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
}

/** Where the export goes: resolves once the text was taken (waits on backpressure). */
export type ExportSink = (text: string) => Promise<void>;

/** Writes the export; returns how many leads it holds. */
export async function exportResults(db: Kysely<Database>, opts: ExportOptions, sink: ExportSink): Promise<{ leads: number; columns: string[] }> {
  const names = await collectColumnNames(db, opts.scope);
  const header = headerOf(names);
  const buffered = bufferedSink(sink);
  if (opts.format === 'csv') await buffered.write(`${opts.bom === false ? '' : UTF8_BOM}${csvRecord(header)}`);
  const pageSize = opts.pageSize ?? (opts.format === 'csv' ? 1000 : 200);
  let leads = 0;
  for (let after = 0; ; ) {
    const page = await exportLeadPage(db, opts.scope, after, pageSize);
    if (page.length === 0) break;
    const history = opts.format === 'jsonl' ? groupByLead(await exportAttemptsOf(db, page[0]!.lead_id, page.at(-1)!.lead_id)) : null;
    for (const row of page) {
      const campaign = opts.campaignNames.get(row.campaign_id) ?? String(row.campaign_id);
      await buffered.write(history ? jsonLine(row, campaign, history.get(row.lead_id) ?? []) : csvLine(row, campaign, names));
    }
    leads += page.length;
    after = page.at(-1)!.lead_id;
    if (page.length < pageSize) break;
  }
  await buffered.flush();
  return { leads, columns: header };
}

/** The fields every format shares, from a lead and its last attempt. */
function summary(row: ExportLeadRow, campaign: string) {
  return {
    campaign,
    lead_id: row.lead_id,
    phone_number: row.attempt_phone ?? row.lead_phone,
    state: row.state,
    state_reason: row.state_reason,
    attempts: Number(row.attempts),
    last_outcome: row.outcome,
    last_call_status: row.result_status ?? row.call_status,
    answered_by: row.attempt_answered_by ?? row.result_answered_by,
    duration_seconds: row.duration_seconds,
    started_at: iso(row.started_at),
    ended_at: iso(row.result_ended_at ?? row.attempt_ended_at),
    cost: row.cost,
    recording_url: row.recording_url,
  };
}

function csvLine(row: ExportLeadRow, campaign: string, names: ColumnNames): string {
  const fixed = Object.values(summary(row, campaign)).map(cellText);
  const variables = parseObject(row.variables_json) ?? {};
  const extracted = parseObject(row.extracted_json) ?? {};
  return csvRecord([...fixed, ...names.variables.map((n) => cellText(variables[n])), ...names.extracted.map((n) => cellText(extracted[n]))]);
}

function jsonLine(row: ExportLeadRow, campaign: string, attempts: ExportAttemptRow[]): string {
  const record = {
    ...summary(row, campaign),
    variables: parseObject(row.variables_json) ?? {},
    extracted: parseObject(row.extracted_json) ?? {},
    evaluation: parseStoredJson(row.evaluation_json),
    transcript: parseStoredJson(row.transcript_json),
    attempt_history: attempts.map((a) => ({
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
      started_at: iso(a.started_at),
      ended_at: iso(a.result_ended_at ?? a.ended_at),
      duration_seconds: a.duration_seconds,
      cost: a.cost,
      recording_url: a.recording_url,
      transcript: parseStoredJson(a.transcript_json),
      extracted: parseObject(a.extracted_json) ?? {},
      evaluation: parseStoredJson(a.evaluation_json),
      result_source: a.source,
    })),
  };
  return `${JSON.stringify(record)}\n`;
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
