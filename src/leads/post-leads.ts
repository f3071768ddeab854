import type { Kysely } from 'kysely';
import { claimIdempotencyKey, findIdempotentAnswer, IdempotencyKeyHeld, isDuplicateKey, keepIdempotentAnswer, sweepIdempotentAnswers } from '../store/idempotency.js';
import type { Database } from '../store/types.js';
import type { ImportCampaign } from './import.js';
import { importLeadItems, type ItemOutcome } from './import-items.js';
import type { LeadItem } from './lead-items.js';

// A POST of leads, with or without an Idempotency-Key. With one, the key is claimed in the
// same transaction as the leads (src/store/idempotency.ts says why that is enough on
// several instances), and a retry is answered from the stored answer. Without one, a
// clash with a concurrent writer (another request or an import taking the same number)
// is run again on what it committed: the items then update, or repeat, its leads.

/** How long an answer is kept under its key. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

/** Runs of one request that met a concurrent writer's key. */
const ATTEMPTS = 3;

export interface IdempotentRequest {
  /** The API key's name, '' without keys: keys of different clients never meet. */
  owner: string;
  key: string;
  /** A digest of what the request asks (method, path, body): the same key for another request is refused. */
  requestHash: string;
}

/** The answer to a POST: `replayed` when it is the stored answer of an earlier request with the same key. */
export interface PostedLeads<T> {
  status: number;
  body: T | unknown;
  replayed: boolean;
}

/** The Idempotency-Key was used before for another request. */
export class IdempotencyKeyReused extends Error {
  constructor() {
    super('this Idempotency-Key was used for another request in the last 24 hours: send a new key for a new request');
    this.name = 'IdempotencyKeyReused';
  }
}

export interface PostLeadsOptions<T> {
  now: number;
  idempotency?: IdempotentRequest;
  /** The response for these outcomes (kept as it is under the key). */
  answer(outcomes: ItemOutcome[]): { status: number; body: T };
  /** Whether the engines are told of the new leads (importLeadItems); default true. */
  announce?: boolean;
}

export async function postLeads<T>(db: Kysely<Database>, campaign: ImportCampaign, items: readonly LeadItem[], opts: PostLeadsOptions<T>): Promise<PostedLeads<T>> {
  const idem = opts.idempotency;
  if (idem && sweepDue(db, opts.now)) await sweepIdempotentAnswers(db, opts.now);
  for (let attempt = 1; ; attempt++) {
    if (idem) {
      const kept = await findIdempotentAnswer(db, idem.owner, idem.key, opts.now);
      if (kept) {
        if (kept.requestHash !== idem.requestHash) throw new IdempotencyKeyReused();
        return { status: kept.status, body: JSON.parse(kept.responseJson) as unknown, replayed: true };
      }
    }
    let answer: { status: number; body: T } | undefined;
    try {
      await importLeadItems(db, campaign, items, {
        now: opts.now,
        ...(opts.announce === false ? { announce: false } : {}),
        ...(idem ? { before: (trx) => claimIdempotencyKey(trx, { ...idem, now: opts.now, expiresAt: opts.now + IDEMPOTENCY_TTL_MS }) } : {}),
        after: async (trx, outcomes) => {
          answer = opts.answer(outcomes);
          if (idem) await keepIdempotentAnswer(trx, idem.owner, idem.key, answer.status, JSON.stringify(answer.body));
        },
      });
      return { ...answer!, replayed: false };
    } catch (err) {
      // The key (or a lead's number) was taken by a request that committed first: look again.
      if (attempt >= ATTEMPTS || !(err instanceof IdempotencyKeyHeld || isDuplicateKey(err))) throw err;
    }
  }
}

/**
 * Expired answers are deleted at most once a minute per store, not at every keyed POST (a
 * round trip each): nothing reads them meanwhile, since a lookup passes over an expired
 * answer and a claim takes its key over.
 */
const SWEEP_EVERY_MS = 60_000;
const lastSweep = new WeakMap<object, number>();
function sweepDue(db: Kysely<Database>, now: number): boolean {
  const key = db.getExecutor().adapter;
  const last = lastSweep.get(key);
  if (last !== undefined && now >= last && now - last < SWEEP_EVERY_MS) return false;
  lastSweep.set(key, now);
  return true;
}
