// `campaignd validate` also reads the data files the config names: every lead CSV (invalid
// rows become warnings with their row numbers; they never stop a campaign, they become
// `invalid` leads) and the do-not-call list. Streams, so large files stay cheap in memory
// apart from the set of numbers used to spot duplicates.
import { LeadFileError, readLeadCsv, type ReadLeadOptions } from '../leads/read-leads.js';
import { readSuppressionFile } from '../leads/suppression-file.js';
import type { CampaignConfig, ConfigProblem, DaemonConfig } from './types.js';

/** Per file, at most this many rows are listed one by one; the rest are counted. */
export const MAX_ROW_WARNINGS = 20;

export interface LeadFileSummary {
  file: string;
  campaign: string;
  rows: number;
  valid: number;
  invalid: number;
  duplicates: number;
}

/** Read a campaign's lead CSV and report unusable rows as warnings (an unreadable file is an error). */
export async function checkLeadFile(campaign: CampaignConfig): Promise<{ problems: ConfigProblem[]; summary?: LeadFileSummary }> {
  const file = campaign.leads.file;
  if (!file) return { problems: [] };
  const problems: ConfigProblem[] = [];
  const summary: LeadFileSummary = { file, campaign: campaign.name, rows: 0, valid: 0, invalid: 0, duplicates: 0 };
  const seen = new Map<string, number>();
  let listed = 0;
  const warn = (line: number, field: string, message: string, hint: string): void => {
    listed++;
    if (listed <= MAX_ROW_WARNINGS) problems.push({ file, line, field, message, hint, severity: 'warning' });
  };
  const opts: ReadLeadOptions = { allowDuplicates: campaign.allowDuplicates };
  if (campaign.defaultCountry) opts.defaultCountry = campaign.defaultCountry;
  if (campaign.leadColumns) Object.assign(opts, { columns: campaign.leadColumns, columnsSource: `lead_columns in ${campaign.file}` });
  try {
    for await (const row of readLeadCsv(file, opts)) {
      summary.rows++;
      if (!row.ok) {
        summary.invalid++;
        const shown = row.phoneText.length > 40 ? `${row.phoneText.slice(0, 37)}...` : row.phoneText;
        warn(row.line, 'phone_number', `${JSON.stringify(shown)} cannot be called: ${row.reason}`, 'fix the row; as it is, it is stored as an invalid lead');
        continue;
      }
      summary.valid++;
      for (const w of row.warnings ?? []) warn(row.line, 'secondary_phone_number', w, 'fix the secondary number; the row is kept without it');
      if (campaign.allowDuplicates) continue;
      const earlier = seen.get(row.lead.phoneNumber);
      if (earlier !== undefined) {
        summary.duplicates++;
        warn(row.line, 'phone_number', `same number as line ${earlier}; both rows become one lead`, 'remove the duplicate row, or set allow_duplicates: true in the campaign');
      } else {
        seen.set(row.lead.phoneNumber, row.line);
      }
    }
  } catch (err) {
    if (!(err instanceof LeadFileError)) throw err;
    problems.push({ file, message: err.message.replace(`${file}: `, ''), hint: `fix the file or the campaign's lead_columns; "campaignd leads import FILE --campaign ${campaign.name} --dry-run" shows how the file is read`, severity: 'error' });
    return { problems };
  }
  if (listed > MAX_ROW_WARNINGS) {
    problems.push({ file, message: `${listed - MAX_ROW_WARNINGS} more rows with problems not listed`, severity: 'warning' });
  }
  if (summary.rows === 0) problems.push({ file, message: 'the lead file has a header but no rows', hint: 'add leads, one per row', severity: 'warning' });
  return { problems, summary };
}

/** Read the daemon's do-not-call list and report lines that are not numbers as warnings. */
export async function checkSuppressionFile(daemon: DaemonConfig): Promise<ConfigProblem[]> {
  const file = daemon.suppressionFile;
  if (!file) return [];
  let result: Awaited<ReturnType<typeof readSuppressionFile>>;
  try {
    result = await readSuppressionFile(file);
  } catch {
    return []; // loadConfig already reported a file that cannot be read
  }
  const problems: ConfigProblem[] = result.problems.slice(0, MAX_ROW_WARNINGS).map((p) => ({
    file,
    line: p.line,
    message: `${JSON.stringify(p.text)} is not a phone number: ${p.reason}`,
    hint: 'write one number a line in E.164 form, e.g. +14155550123',
    severity: 'warning',
  }));
  if (result.problems.length > MAX_ROW_WARNINGS) {
    problems.push({ file, message: `${result.problems.length - MAX_ROW_WARNINGS} more unusable lines not listed`, severity: 'warning' });
  }
  return problems;
}
