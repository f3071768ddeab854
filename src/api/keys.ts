import crypto from 'node:crypto';
import type { Kysely } from 'kysely';
import { activeApiKeysWithPrefix, insertApiKey, type ActiveApiKey } from '../store/api-keys.js';
import type { ApiKeyScope, Database } from '../store/types.js';

// The API's keys: `cdk_` and the base64url of 32 random bytes. The store keeps the key's
// SHA-256 and its first characters (the prefix). A request's key is found by its prefix
// and then accepted only when the hashes are equal, compared in constant time. The
// prefix is no secret (`api-key list` shows it), so that finding it or not may take
// different times; what guards the API is the 256 random bits behind it.

export const API_KEY_START = 'cdk_';
/** `cdk_` and base64url of 32 bytes (43 characters, no padding). */
const KEY_FORMAT = /^cdk_[A-Za-z0-9_-]{43}$/;
/** `cdk_` and 8 characters (48 of the 256 bits): enough to tell keys apart in a list. */
const PREFIX_LENGTH = API_KEY_START.length + 8;
const KEY_BYTES = 32;
/** What a key's name may be: it is typed on a command line and shown in lists. */
const NAME_FORMAT = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export const API_KEY_SCOPES: readonly ApiKeyScope[] = ['read', 'write'];

/** The source of a key's randomness (crypto.randomBytes; tests pass their own). */
export type RandomBytes = (size: number) => Buffer;

export interface NewApiKey {
  /** The key itself: shown once, never stored. */
  key: string;
  prefix: string;
  /** Hex SHA-256 of the key. */
  hash: string;
}

/** Whether `text` has the form of a key campaignd makes. */
export function isApiKeyFormat(text: string): boolean {
  return KEY_FORMAT.test(text);
}

/** The part of a key that is stored and shown in the clear. */
export function apiKeyPrefix(key: string): string {
  return key.slice(0, PREFIX_LENGTH);
}

/** Hex SHA-256 of a key, as the store keeps it. */
export function hashApiKey(key: string): string {
  return crypto.createHash('sha256').update(key, 'utf8').digest('hex');
}

/** Whether `key` hashes to `storedHash`, compared in constant time (equal lengths always: both are SHA-256). */
export function apiKeyMatches(key: string, storedHash: string): boolean {
  const given = crypto.createHash('sha256').update(key, 'utf8').digest();
  const stored = Buffer.from(storedHash, 'hex');
  return stored.length === given.length && crypto.timingSafeEqual(given, stored);
}

/** A new key with its prefix and hash. */
export function newApiKey(random: RandomBytes = crypto.randomBytes): NewApiKey {
  const bytes = random(KEY_BYTES);
  if (bytes.length !== KEY_BYTES) throw new Error(`an API key needs ${KEY_BYTES} random bytes, the source gave ${bytes.length}`);
  const key = `${API_KEY_START}${bytes.toString('base64url')}`;
  return { key, prefix: apiKeyPrefix(key), hash: hashApiKey(key) };
}

/** Why `name` cannot name a key, or null when it can. */
export function apiKeyNameProblem(name: string): string | null {
  if (NAME_FORMAT.test(name)) return null;
  return `"${name.length > 70 ? `${name.slice(0, 67)}...` : name}" is not a key name: use 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit`;
}

/**
 * Makes and stores a key named `name`: the key (for the one time it is shown), or null
 * when a key not revoked already has that name.
 */
export async function createApiKey(db: Kysely<Database>, name: string, scope: ApiKeyScope, now: number, random?: RandomBytes): Promise<NewApiKey | null> {
  const made = newApiKey(random);
  const stored = await insertApiKey(db, { name, scope, prefix: made.prefix, keyHash: made.hash }, now);
  return stored ? made : null;
}

/** The key not revoked that `key` is, or null (unknown, revoked, or not a key at all). Reads the store every time. */
export async function findApiKey(db: Kysely<Database>, key: string): Promise<ActiveApiKey | null> {
  if (!isApiKeyFormat(key)) return null;
  const candidates = await activeApiKeysWithPrefix(db, apiKeyPrefix(key));
  // Every candidate is compared, so the time does not depend on which one matches.
  let found: ActiveApiKey | null = null;
  for (const c of candidates) if (apiKeyMatches(key, c.key_hash)) found = c;
  return found;
}
