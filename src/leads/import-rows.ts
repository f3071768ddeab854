import type { Kysely } from 'kysely';
import type { InsertLeads } from '../store/lead-batch.js';
import type { StagedLead } from '../store/lead-copy.js';
import { deleteLeadsById, leadsByDedupeKey, leadsByExternalId, refreshPendingLead, secondaryNumbersOf, setExternalId, setLeadIdentity, type ImportPrior, type StoredLead } from '../store/lead-import.js';
import { suppressedAmong } from '../store/suppressions.js';
import type { Database } from '../store/types.js';
import { PhoneSet } from './number-set.js';
import type { ReadLeadResult } from './read-leads.js';

// What each lead row becomes, whatever its source (a lead file through import.ts, API items
// through import-items.ts): ONE set of rules for both.
//
// The dedupe key (what makes two rows "the same lead"):
//   - a valid row: its E.164 number, or `PREFIX:line` when the campaign allows duplicates;
//   - an invalid row: `invalid:PREFIX:line`, so that re-importing a file does not add it twice.
//   PREFIX is the file's path; API requests use a prefix of their own, never repeated.
// Within one source a number seen before is a `duplicate` (unless duplicates are allowed),
// and so is an external id seen before.
// Against the store:
//   - a new key: a new lead, `accepted` (pending), `suppressed` (number on the list) or
//     `invalid` (kept with its reason);
//   - a key already stored: `updated` or `unchanged`: variables, timezone and secondary
//     numbers are refreshed only while the lead is `pending` (a lead in progress keeps what
//     it was dialled with);
//   - a file's row that was invalid and is now fixed replaces its `invalid:` placeholder.
// External ids (API items only), unique per campaign:
//   - an external id already stored names its lead, whatever the number: while that lead is
//     not yet called (`pending`, or `invalid` and now fixed) the item updates it, its number
//     too; once called (any other state) it is left as it is, `unchanged`, and the reason
//     says so. An invalid item never changes a stored lead. A new number that is already
//     another lead's in the campaign is a `duplicate` and changes nothing.
//   - a new external id with the number of a stored lead that has no external id (a lead
//     from a file, or posted without one): that lead takes the external id (so the caller
//     can look it up by it) and is refreshed as above: the number decides what "the same
//     lead" is, as in a file.
//   - a new external id with the number of a lead that has another external id: `duplicate`.

export type LeadOutcome = 'accepted' | 'updated' | 'unchanged' | 'duplicate' | 'suppressed' | 'invalid';

/** What became of one row. `id`: the lead it made or touched, or, for a duplicate, the lead it repeats when that is stored. */
export interface RowOutcome {
  id: number | null;
  outcome: LeadOutcome;
  reason: string | null;
}

/** A row on its way to the store. */
export interface PlannedRow {
  result: ReadLeadResult;
  key: string;
  variablesJson: string;
}

export interface RowCampaign {
  id: number;
  allowDuplicates: boolean;
}

/** A row that repeats an earlier one of the same source: by number, or by external id. */
export type Repeat = { by: 'number'; line: number } | { by: 'external_id'; line: number };

/** Duplicates within one source (a file, a request), in the memory of a PhoneSet. */
export class RowScreen {
  private readonly numbers: PhoneSet;
  private readonly externalIds = new Map<string, number>();

  /** `expectedRows`: known for an API request, so that one lead does not get a table for a file's. */
  constructor(
    private readonly campaign: RowCampaign,
    private readonly keyPrefix: string,
    expectedRows?: number,
  ) {
    this.numbers = new PhoneSet(expectedRows);
  }

  /** The earlier row this one repeats, or undefined when it goes on to the store. */
  repeatOf(result: ReadLeadResult): Repeat | undefined {
    if (result.externalId !== undefined) {
      const first = this.externalIds.get(result.externalId);
      if (first !== undefined) return { by: 'external_id', line: first };
    }
    if (result.ok && !this.campaign.allowDuplicates) {
      const first = this.numbers.addAt(result.lead.phoneNumber, result.line);
      if (first !== undefined) return { by: 'number', line: first };
    }
    if (result.externalId !== undefined) this.externalIds.set(result.externalId, result.line);
    return undefined;
  }

  plan(result: ReadLeadResult): PlannedRow {
    if (!result.ok) return { result, key: `invalid:${this.keyPrefix}:${result.line}`, variablesJson: JSON.stringify(result.variables) };
    const key = this.campaign.allowDuplicates ? `${this.keyPrefix}:${result.line}` : result.lead.phoneNumber;
    return { result, key, variablesJson: JSON.stringify(result.lead.variables) };
  }
}

export interface RowWriteOptions {
  now: number;
  /** The prefix of the rows' dedupe keys (a file's path). */
  keyPrefix: string;
  /** Count only, write nothing (a dry run): the store is only read. */
  dryRun?: boolean;
  /** The do-not-call numbers to judge rows by, instead of the store's list. */
  suppressed?: ReadonlySet<string>;
}

const NOT_YET_CALLED = new Set(['pending', 'invalid']);

/**
 * Writes one batch of rows in the caller's transaction (`trx`, `insert` of lead-batch.ts)
 * and returns what became of each, in the rows' order. Counts nothing itself: a batch run
 * again after a rollback must not count twice.
 */
export async function writeRows(trx: Kysely<Database>, insert: InsertLeads, prior: ImportPrior, campaign: RowCampaign, rows: readonly PlannedRow[], opts: RowWriteOptions): Promise<RowOutcome[]> {
  const outcomes: (RowOutcome | undefined)[] = new Array(rows.length);
  // Placeholders of a file's rows that were invalid before and are valid now.
  const placeholders = prior.invalidFromFile ? rows.filter((r) => r.result.ok).map((r) => `invalid:${opts.keyPrefix}:${r.result.line}`) : [];
  const existing = prior.campaignHasLeads ? await leadsByDedupeKey(trx, campaign.id, [...rows.map((r) => r.key), ...placeholders]) : new Map<string, StoredLead>();
  const externalIds = rows.flatMap((r) => (r.result.externalId !== undefined ? [r.result.externalId] : []));
  const named = prior.campaignHasLeads && externalIds.length > 0 ? await leadsByExternalId(trx, campaign.id, externalIds) : new Map<string, StoredLead>();

  const fixed = placeholders.map((k) => existing.get(k)?.id).filter((id): id is number => id !== undefined);
  if (fixed.length > 0 && !opts.dryRun) await deleteLeadsById(trx, fixed);

  // Leads an external id gives another number in this batch: a row with their old number
  // cannot be a new lead (the number is still theirs until the batch writes) nor theirs.
  const moving = new Set<number>();
  for (const row of rows) {
    const lead = row.result.externalId !== undefined ? named.get(row.result.externalId) : undefined;
    if (lead && row.result.ok && NOT_YET_CALLED.has(lead.state) && !campaign.allowDuplicates && row.key !== lead.dedupe_key) moving.add(lead.id);
  }

  // Decide each row against what is stored: new, an update of a stored lead, or settled now.
  const fresh: number[] = [];
  const updates: { index: number; lead: StoredLead; externalId: string | null; newKey: string }[] = [];
  rows.forEach((row, index) => {
    const { result } = row;
    const externalId = result.externalId ?? null;
    const byId = externalId !== null ? named.get(externalId) : undefined;
    if (byId) {
      if (!result.ok) {
        outcomes[index] = { id: byId.id, outcome: 'invalid', reason: `${result.reason}; the lead with this external_id is left as it is` };
      } else if (!NOT_YET_CALLED.has(byId.state)) {
        outcomes[index] = { id: byId.id, outcome: 'unchanged', reason: alreadyCalled(byId.state) };
      } else {
        const newKey = campaign.allowDuplicates || row.key === byId.dedupe_key ? byId.dedupe_key : row.key;
        const other = newKey !== byId.dedupe_key ? existing.get(newKey) : undefined;
        if (other && other.id !== byId.id) outcomes[index] = { id: other.id, outcome: 'duplicate', reason: `${sameNumberAs(other)}; the lead with this external_id is left as it is` };
        else updates.push({ index, lead: byId, externalId, newKey });
      }
      return;
    }
    const stored = existing.get(row.key);
    if (!stored) {
      fresh.push(index);
      return;
    }
    if (!result.ok) {
      outcomes[index] = { id: stored.id, outcome: 'invalid', reason: result.reason };
    } else if (moving.has(stored.id)) {
      outcomes[index] = { id: stored.id, outcome: 'duplicate', reason: `${sameNumberAs(stored)}, which takes another number in this request` };
    } else if (externalId !== null && stored.external_id !== null && stored.external_id !== externalId) {
      outcomes[index] = { id: stored.id, outcome: 'duplicate', reason: sameNumberAs(stored) };
    } else if (stored.state !== 'pending') {
      // A called lead keeps what it was dialled with; it may still take the caller's id.
      outcomes[index] = { id: stored.id, outcome: 'unchanged', reason: alreadyCalled(stored.state) };
      if (externalId !== null && stored.external_id === null && !opts.dryRun) updates.push({ index, lead: stored, externalId, newKey: stored.dedupe_key });
    } else {
      updates.push({ index, lead: stored, externalId: externalId ?? stored.external_id, newKey: stored.dedupe_key });
    }
  });

  // The suppression list, for new numbers: new leads, and stored leads given another number or fixed.
  const checked = new Set<string>();
  for (const i of fresh) if (rows[i]!.result.ok) checked.add(numberOf(rows[i]!));
  for (const u of updates) if (numberOf(rows[u.index]!) !== u.lead.phone_number || u.lead.state === 'invalid') checked.add(numberOf(rows[u.index]!));
  const wanted = [...checked];
  const dnc = opts.suppressed
    ? new Set(wanted.filter((n) => opts.suppressed!.has(n)))
    : prior.anySuppressions && wanted.length > 0
      ? await suppressedAmong(trx, wanted)
      : new Set<string>();

  const staged = fresh.map((i) => newLead(rows[i]!, dnc, opts.now));
  const ids = opts.dryRun ? fresh.map(() => null) : await insert(staged);
  fresh.forEach((rowIndex, n) => {
    const lead = staged[n]!;
    const id = ids[n] ?? null;
    outcomes[rowIndex] =
      lead.state === 'invalid'
        ? { id, outcome: 'invalid', reason: lead.stateReason }
        : lead.state === 'suppressed'
          ? { id, outcome: 'suppressed', reason: lead.stateReason }
          : { id, outcome: 'accepted', reason: null };
  });

  await applyUpdates(trx, rows, updates, dnc, opts, outcomes);
  return outcomes.map((o) => o!);
}

function numberOf(row: PlannedRow): string {
  return row.result.ok ? row.result.lead.phoneNumber : row.result.phoneText;
}

/** States in which a lead was (or is being) called. */
const CALLED = new Set(['calling', 'retry-scheduled', 'completed', 'reached-max-retries']);

function alreadyCalled(state: string): string {
  return CALLED.has(state) ? `already called (state ${state}): left as it is` : `the lead is ${state}: left as it is`;
}

function sameNumberAs(lead: StoredLead): string {
  return `same number as lead ${lead.id}${lead.external_id !== null ? ` (external_id "${lead.external_id}")` : ''}`;
}

const SUPPRESSED_REASON = 'on the suppression list';

/** A new lead as stored. */
function newLead(row: PlannedRow, dnc: ReadonlySet<string>, now: number): StagedLead {
  const { result, key, variablesJson } = row;
  const externalId = result.externalId ?? null;
  if (!result.ok) {
    return { dedupeKey: key, phoneNumber: result.phoneText, variablesJson, timezone: null, state: 'invalid', stateReason: result.reason, nextDueAt: null, sourceLine: result.line, contacts: null, externalId };
  }
  const { lead } = result;
  const contacts = lead.secondary;
  const timezone = lead.timezone ?? null;
  if (dnc.has(lead.phoneNumber)) {
    return { dedupeKey: key, phoneNumber: lead.phoneNumber, variablesJson, timezone, state: 'suppressed', stateReason: SUPPRESSED_REASON, nextDueAt: null, sourceLine: result.line, contacts, externalId };
  }
  return { dedupeKey: key, phoneNumber: lead.phoneNumber, variablesJson, timezone, state: 'pending', stateReason: null, nextDueAt: now, sourceLine: result.line, contacts, externalId };
}

/** Stored leads refreshed from their rows (updates whose outcome is still open, or an external id attached to a called lead). */
async function applyUpdates(
  trx: Kysely<Database>,
  rows: readonly PlannedRow[],
  updates: readonly { index: number; lead: StoredLead; externalId: string | null; newKey: string }[],
  dnc: ReadonlySet<string>,
  opts: RowWriteOptions,
  outcomes: (RowOutcome | undefined)[],
): Promise<void> {
  const open = updates.filter((u) => outcomes[u.index] === undefined);
  const secondaries = open.length > 0 ? await secondaryNumbersOf(trx, open.map((u) => u.lead.id)) : new Map<number, string[]>();
  for (const u of updates) {
    const row = rows[u.index]!;
    const { lead } = u;
    if (outcomes[u.index] !== undefined) {
      // Settled already (a called lead): only the external id is attached.
      await setExternalId(trx, lead.id, u.externalId!, opts.now);
      continue;
    }
    if (!row.result.ok) continue; // invalid rows never reach here
    const wanted = row.result.lead;
    const timezone = wanted.timezone ?? null;
    const contactsChanged = (secondaries.get(lead.id) ?? []).join(',') !== wanted.secondary.join(',');
    const numberChanged = wanted.phoneNumber !== lead.phone_number || u.newKey !== lead.dedupe_key || lead.state === 'invalid';
    const idChanged = u.externalId !== lead.external_id;
    const fieldsChanged = lead.variables_json !== row.variablesJson || lead.timezone !== timezone || contactsChanged;
    const suppressed = numberChanged && dnc.has(wanted.phoneNumber);
    if (!numberChanged && !idChanged && !fieldsChanged) {
      outcomes[u.index] = { id: lead.id, outcome: 'unchanged', reason: null };
      continue;
    }
    outcomes[u.index] = suppressed ? { id: lead.id, outcome: 'suppressed', reason: SUPPRESSED_REASON } : { id: lead.id, outcome: 'updated', reason: null };
    if (opts.dryRun) continue;
    if (numberChanged) {
      const state = suppressed ? 'suppressed' : 'pending';
      await setLeadIdentity(trx, lead.id, { phoneNumber: wanted.phoneNumber, dedupeKey: u.newKey, externalId: u.externalId, state, stateReason: suppressed ? SUPPRESSED_REASON : null, nextDueAt: suppressed ? null : opts.now }, opts.now);
    } else if (idChanged) {
      await setExternalId(trx, lead.id, u.externalId!, opts.now);
    }
    if (fieldsChanged || numberChanged) await refreshPendingLead(trx, lead.id, { variablesJson: row.variablesJson, timezone, ...(contactsChanged ? { secondary: wanted.secondary } : {}) }, opts.now);
  }
}
