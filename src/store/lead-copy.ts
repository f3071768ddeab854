import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import { sql, type Kysely } from 'kysely';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import type { Database } from './types.js';

// New leads on PostgreSQL by `COPY … FROM STDIN` (issue 12: import ≥ 50k rows/s), straight
// into `leads` and `lead_contacts`: the batch's ids are taken from the table's sequence
// first, so that the contacts can name their lead without the rows travelling back. COPY
// fires the same triggers as an INSERT: the counters' statement triggers once per COPY,
// the hook triggers once per row. It replaces the multi-row insert of bulk-insert.ts, whose
// bound arrays pg serialised and the server parsed at half this rate; a staging table and
// one INSERT … SELECT cost as much again in sorting, materialising and joining the rows.

/** One new lead of a batch; `contacts` are its secondary numbers in order (positions 1..), none for an invalid row. */
export interface StagedLead {
  dedupeKey: string;
  phoneNumber: string;
  variablesJson: string;
  timezone: string | null;
  state: string;
  stateReason: string | null;
  nextDueAt: number | null;
  sourceLine: number;
  contacts: readonly string[] | null;
  /** The caller's own id (API leads); null for a file's. */
  externalId: string | null;
}

/**
 * Inserts the new leads of one batch and their contacts, in the caller's transaction on
 * `client` (`trx` must be a transaction on that same connection: withPgClient gives both).
 * Ids follow the rows' order, as the multi-row insert gave them; returns them in that order.
 */
export async function copyNewLeads(
  client: pg.PoolClient,
  trx: Kysely<Database>,
  leads: readonly StagedLead[],
  fields: { campaignId: number; sourceFile: string; now: number; idTurn?: { previous: Promise<void>; done(): void } },
): Promise<number[]> {
  // One query, so in increasing order; other sessions' ids may fall between, as with INSERT.
  // With batches written side by side (import.ts), each waits for the one before it to take
  // its ids, so that leads keep the file's order (ids break ties in the dialling order).
  await fields.idTurn?.previous;
  // The sequence is named once, in a subquery: written inside nextval(), its lookup by
  // name ran for every row (10,000 ids 40–60 ms against 9 ms, bench/RESULTS.md).
  const ids =
    leads.length === 0
      ? { rows: [] }
      : await sql<{ id: number }>`select nextval(s.seq) as id from (select pg_get_serial_sequence('leads', 'id')::regclass as seq offset 0) s, generate_series(1, ${leads.length}::integer)`.execute(trx);
  fields.idTurn?.done();
  if (leads.length === 0) return [];
  const common = `${fields.campaignId}`;
  const tail = `\t${copyField(fields.sourceFile)}`;
  const now = `${fields.now}`;
  // Filled as the lead chunks below are written: complete once their COPY has read them all.
  const contactLines: string[] = [];
  // The rows go out in chunks as they are written, so that the server takes in the first
  // while this thread writes the next (a 10,000-lead POST's lines took 25–80 ms to write).
  function* leadChunks(): Generator<Buffer> {
    for (let start = 0; start < leads.length; start += COPY_CHUNK_ROWS) {
      let chunk = '';
      for (let i = start; i < Math.min(start + COPY_CHUNK_ROWS, leads.length); i++) {
        const lead = leads[i]!;
        const id = ids.rows[i]!.id;
        chunk += `${id}\t${common}\t${copyField(lead.dedupeKey)}\t${copyField(lead.phoneNumber)}\t${copyField(lead.variablesJson)}\t${copyField(lead.timezone)}\t${copyField(lead.state)}\t${copyField(lead.stateReason)}\t${lead.nextDueAt ?? '\\N'}${tail}\t${lead.sourceLine}\t${now}\t${now}\t${copyField(lead.externalId)}\n`;
        const contacts = lead.contacts ?? [];
        for (let n = 0; n < contacts.length; n++) contactLines.push(`${id}\t${n + 1}\t${copyField(contacts[n]!)}\n`);
      }
      yield Buffer.from(chunk, 'utf8');
    }
  }
  await copyIn(client, 'copy leads (id, campaign_id, dedupe_key, phone_number, variables_json, timezone, state, state_reason, next_due_at, source_file, source_line, created_at, updated_at, external_id) from stdin', leadChunks());
  if (contactLines.length > 0) await copyIn(client, 'copy lead_contacts (lead_id, position, phone_number) from stdin', [Buffer.from(contactLines.join(''), 'utf8')]);
  return ids.rows.map((r) => Number(r.id));
}

/** Rows per chunk of COPY data. */
const COPY_CHUNK_ROWS = 1000;

async function copyIn(client: pg.PoolClient, statement: string, chunks: Iterable<Buffer>): Promise<void> {
  await pipeline(Readable.from(chunks), client.query(copyFrom(statement)));
}

/** A value as a field of COPY's text format: backslash, tab, newline and return escaped; null as \N. */
export function copyField(value: string | null): string {
  if (value === null) return '\\N';
  return /[\\\t\n\r]/.test(value) ? value.replace(/[\\\t\n\r]/g, escapeChar) : value;
}

function escapeChar(c: string): string {
  return c === '\\' ? '\\\\' : c === '\t' ? '\\t' : c === '\n' ? '\\n' : '\\r';
}
