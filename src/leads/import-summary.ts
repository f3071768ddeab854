import { delimiterName } from './delimiter.js';
import { encodingName } from './encoding.js';
import type { ImportSummary } from './import.js';
import type { LeadFileLayout, ReadLeadResult } from './read-leads.js';

// What an import did, as `campaignd leads import` prints it and the dashboard's upload
// shows it: how the file was read, the counts, invalid rows by reason, the first problem rows.

export interface SummaryView {
  campaign: string;
  /** The file as the reader knows it (relative to the working directory, or the uploaded name). */
  shownFile: string;
  summary: ImportSummary;
  layout: LeadFileLayout | undefined;
  dryRun: boolean;
  preview: ReadLeadResult[];
  note: string | undefined;
}

/** The human summary: how the file was read, counts, invalid rows by reason, the first problem rows. */
export function renderSummary(v: SummaryView): string {
  const s = v.summary;
  const { shownFile } = v;
  const n = (x: number): string => x.toLocaleString('en').padStart(9);
  // Rows whose number is (or stays) a lead to call of the campaign, of all rows read: the
  // rest were refused as duplicates, invalid or suppressed.
  const taken = `${(s.accepted + s.updated + s.unchanged).toLocaleString('en')} of ${s.read.toLocaleString('en')} rows`;
  const lines = [
    v.dryRun ? `Dry run, nothing written: ${shownFile} into campaign "${v.campaign}" would import ${taken}` : `Imported ${shownFile} into campaign "${v.campaign}": ${taken}`,
  ];
  if (v.layout) lines.push(...layoutLines(v.layout));
  if (v.note) lines.push(`Note: ${v.note}`);
  lines.push(
    `${n(s.accepted)}  accepted (new leads)`,
    `${n(s.updated)}  updated (pending leads with changed data)`,
    `${n(s.unchanged)}  unchanged (already imported)`,
    `${n(s.duplicates)}  duplicates (number seen earlier in the file)`,
    `${n(s.suppressed)}  suppressed (on the do-not-call list)`,
    `${n(s.invalid)}  invalid`,
  );
  const reasons = Object.entries(s.invalidByReason).sort((a, b) => b[1] - a[1]);
  for (const [reason, count] of reasons) lines.push(`${' '.repeat(11)}${count.toLocaleString('en').padStart(7)}  ${reason}`);
  if (s.warnings > 0) lines.push(`${n(s.warnings)}  secondary numbers skipped`);
  if (s.samples.length > 0) {
    lines.push('First problem rows:');
    for (const { line, message } of s.samples.slice(0, 10)) lines.push(`  line ${line}: ${message}`);
  }
  if (v.dryRun && v.preview.length > 0) {
    lines.push('First rows as parsed:');
    for (const row of v.preview) lines.push(`  ${previewLine(row)}`);
  }
  return `${lines.join('\n')}\n`;
}

function layoutLines(layout: LeadFileLayout): string[] {
  const f = layout.format;
  const how =
    f.type === 'xlsx'
      ? `Read as an Excel workbook, sheet "${f.sheet}"`
      : `Read as CSV: ${encodingName(f.encoding)}${f.bom ? ' with BOM' : ''}, ${delimiterName(f.delimiter)}-separated`;
  const c = layout.columns;
  const role = (field: string, choice: { column: string; how: string } | undefined): string | undefined =>
    choice ? `${field} ← "${choice.column}"${choice.how === 'named' ? '' : ` (${choice.how})`}` : undefined;
  const roles = [role('phone_number', c.phone_number), role('timezone', c.timezone), role('country', c.country)].filter((r): r is string => !!r);
  if (c.secondary_phone_numbers.length > 0) roles.push(`secondary_phone_numbers ← ${c.secondary_phone_numbers.map((h) => `"${h}"`).join(', ')}`);
  const vars = Object.entries(c.variables).map(([name, column]) => (name === column ? name : `${name} ← "${column}"`));
  return [how, `Columns: ${roles.join(', ')}`, `Variables: ${vars.length > 0 ? vars.join(', ') : '(none)'}`];
}

function previewLine(row: ReadLeadResult): string {
  if (!row.ok) return `line ${row.line}: invalid (${row.reason}): ${JSON.stringify(row.phoneText)}`;
  const { lead } = row;
  const parts = [lead.phoneNumber];
  if (lead.timezone) parts.push(`timezone ${lead.timezone}`);
  if (lead.secondary.length > 0) parts.push(`secondary ${lead.secondary.join(', ')}`);
  parts.push(`variables ${JSON.stringify(lead.variables)}`);
  return `line ${row.line}: ${parts.join(', ')}`;
}
