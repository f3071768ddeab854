import type { Kysely } from 'kysely';
import { recordEvent } from '../store/events.js';
import { suppressPendingLeads } from '../store/suppressions.js';
import type { Database } from '../store/types.js';
import type { Clock } from '../time/clock.js';
import { importLeads, type ImportCampaign, type ImportOptions, type ImportSummary } from './import.js';
import { readLeadFile, type LeadFileLayout, type ReadLeadOptions, type ReadLeadResult } from './read-leads.js';

// One lead file into one campaign: read (any CSV or .xlsx), import, then the steps every
// import ends with (leads now on the do-not-call list suppressed, the import recorded).
// `campaignd leads import` and the dashboard's upload both come through here, so a file
// uploaded is imported exactly as the same file given to the command.
// Throws LeadFileError when the file cannot be read as a lead file.

export interface LeadFileImport {
  /** The file read. */
  file: string;
  /** Names the rows in dedupe keys, `source_file` and the recorded event: the same on every import of the same file. */
  sourceFile: string;
  campaign: ImportCampaign;
  /** How to read the file: delimiter, encoding, sheet, column mapping. */
  read: Omit<ReadLeadOptions, 'defaultCountry' | 'allowDuplicates' | 'onLayout'>;
  clock: Clock;
  dryRun?: boolean;
  /** Who imported, recorded with the event when it is not the command ("dashboard"). */
  by?: string;
  /** Sees each row as read (the dry run's preview). */
  onRow?: (row: ReadLeadResult) => void;
  /** Passed to importLeads as they are. */
  options?: Pick<ImportOptions, 'suppressed' | 'parallelWrites' | 'onProgress'>;
}

export interface LeadFileImported {
  summary: ImportSummary;
  /** How the file was read (absent when it had no header row). */
  layout: LeadFileLayout | undefined;
}

export async function importLeadFile(db: Kysely<Database>, req: LeadFileImport): Promise<LeadFileImported> {
  const { campaign, clock } = req;
  let layout: LeadFileLayout | undefined;
  const readOpts: ReadLeadOptions = { ...req.read, allowDuplicates: campaign.allowDuplicates, onLayout: (l) => (layout = l) };
  if (campaign.defaultCountry) readOpts.defaultCountry = campaign.defaultCountry;
  const rows = readLeadFile(req.file, readOpts);
  const onRow = req.onRow;
  async function* tapped(): AsyncGenerator<ReadLeadResult> {
    for await (const row of rows) {
      onRow?.(row);
      yield row;
    }
  }
  const summary = await importLeads(db, campaign, onRow ? tapped() : rows, { ...req.options, now: clock.now(), sourceFile: req.sourceFile, dryRun: !!req.dryRun });
  if (!req.dryRun) {
    await suppressPendingLeads(db, clock.now(), { campaignId: campaign.id });
    await recordEvent(db, { at: clock.now(), campaignId: campaign.id, kind: 'leads-imported', data: { file: req.sourceFile, ...(req.by ? { by: req.by } : {}), ...summary, samples: undefined } });
  }
  return { summary, layout };
}
