import fs from 'node:fs';
import path from 'node:path';
import type { Kysely } from 'kysely';
import type { CampaignConfig } from '../config/types.js';
import { CLIENT_BODY_LIMIT_BYTES } from '../http/body.js';
import { importLeadFile } from '../leads/import-file.js';
import { renderSummary } from '../leads/import-summary.js';
import { LeadFileError } from '../leads/read-leads.js';
import { getCampaignByName } from '../store/campaigns.js';
import type { Database } from '../store/types.js';
import type { Clock } from '../time/clock.js';

// A lead file uploaded from the dashboard, imported into one campaign exactly as
// `campaignd leads import FILE --campaign NAME` imports it (src/leads/import-file.ts), with
// the campaign's settings as the daemon last loaded them from its file (config_json). The
// suppression list is the store's, as the daemon loaded it (the command, a process of its
// own, reads the suppression file first).
//
// The page's script sends the file as the request body (no multipart form to parse), its
// name in the X-File-Name header (percent-encoded), the campaign in the query string. The
// import reads a file, so the bytes are staged in a directory of their own under
// `stagingDir` and removed whatever happens. Rows are named `dashboard-upload/NAME`
// (dedupe keys, source_file), so uploading the same file again changes nothing, as
// importing it again does.

export const UPLOAD_PATH = '/dashboard/leads/upload';
/** The largest upload, the API's limit too: a lead file beyond it is imported with `campaignd leads import`. */
export const UPLOAD_LIMIT_BYTES = CLIENT_BODY_LIMIT_BYTES;
export const FILE_NAME_HEADER = 'x-file-name';

/** What the dashboard answers an upload: the import's summary, or why there was none. */
export type UploadAnswer = { status: 200; body: Record<string, unknown> & { text: string } } | { status: 400 | 404 | 409 | 422; body: { error: string } };

export interface UploadRequest {
  campaign: string;
  /** The uploaded file's name as the browser gave it. */
  fileName: string;
  bytes: Buffer;
  stagingDir: string;
  clock: Clock;
}

/** The upload's name as shown and recorded: its last path part, without control characters. */
export function uploadName(given: string): string {
  const base = given.split(/[\\/]/).pop() ?? '';
  return base.replace(/[\u0000-\u001f\u007f]/g, '').trim().slice(0, 200);
}

/** The too-large answer's text. */
export const TOO_LARGE = `the file is larger than ${UPLOAD_LIMIT_BYTES / 1024 / 1024} MB, the most the dashboard takes: split it, or import it on the daemon's host with "campaignd leads import FILE --campaign NAME"`;

export async function importUpload(db: Kysely<Database>, req: UploadRequest): Promise<UploadAnswer> {
  const name = uploadName(req.fileName);
  if (name === '') return { status: 400, body: { error: `the upload has no file name (the ${FILE_NAME_HEADER} header): upload from the dashboard page` } };
  const row = await getCampaignByName(db, req.campaign);
  if (!row) return { status: 404, body: { error: `no campaign named "${req.campaign}"` } };
  const cfg = campaignSettings(row.config_json);
  if (!cfg) return { status: 409, body: { error: `campaign "${req.campaign}" has no readable settings in the store: run "campaignd validate", fix its file and send SIGHUP` } };

  // A name of our own (never the upload's: no path tricks), keeping the extension the
  // reader tells an .xlsx by.
  const ext = path.extname(name).toLowerCase();
  const dir = await fs.promises.mkdtemp(path.join(req.stagingDir, 'campaignd-upload-'));
  const staged = path.join(dir, `leads${/^\.[a-z0-9]{1,8}$/.test(ext) ? ext : ''}`);
  try {
    await fs.promises.writeFile(staged, req.bytes);
    const columnsSource = `lead_columns in ${cfg.file}`;
    const { summary, layout } = await importLeadFile(db, {
      file: staged,
      sourceFile: `dashboard-upload/${name}`,
      campaign: { id: row.id, allowDuplicates: cfg.allowDuplicates, ...(cfg.defaultCountry ? { defaultCountry: cfg.defaultCountry } : {}) },
      read: cfg.leadColumns ? { columns: cfg.leadColumns, columnsSource } : {},
      clock: req.clock,
      by: 'dashboard',
    });
    const text = renderSummary({ campaign: row.name, shownFile: name, summary, layout, dryRun: false, preview: [], note: undefined });
    return { status: 200, body: { campaign: row.name, file: name, dryRun: false, ...summary, ...(layout ? { format: layout.format, columns: layout.columns } : {}), text } };
  } catch (err) {
    // The import's own words, about the file as the operator named it.
    if (err instanceof LeadFileError) return { status: 422, body: { error: err.message.split(staged).join(name) } };
    throw err;
  } finally {
    await fs.promises.rm(dir, { recursive: true, force: true });
  }
}

/** The campaign file's settings an import needs, from the store's copy; null when unreadable. */
function campaignSettings(json: string): Pick<CampaignConfig, 'file' | 'allowDuplicates' | 'defaultCountry' | 'leadColumns'> | null {
  try {
    const value = JSON.parse(json) as Partial<CampaignConfig> | null;
    if (!value || typeof value.file !== 'string') return null;
    return { file: value.file, allowDuplicates: value.allowDuplicates === true, ...(value.defaultCountry ? { defaultCountry: value.defaultCountry } : {}), ...(value.leadColumns ? { leadColumns: value.leadColumns } : {}) };
  } catch {
    return null;
  }
}
