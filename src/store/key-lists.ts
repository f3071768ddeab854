import { sql, type Kysely } from 'kysely';
import { isPostgres } from './dialect.js';
import type { Database } from './types.js';

// Looking rows up by a batch of keys (an import's numbers, dedupe keys, external ids). On
// PostgreSQL one array parameter holds a whole batch (`column = any($1::text[])`): lists
// of a thousand parameters cost as much to parse and plan as to run, ten of them per
// 10,000 keys. SQLite has no arrays: lists of `chunk` keys for `in (…)`.

/** The keys in the lists to look up: one on PostgreSQL, `chunk` keys each on SQLite. */
export function keyParts(db: Kysely<Database>, keys: readonly string[], chunk = 1024): (readonly string[])[] {
  if (isPostgres(db)) return keys.length > 0 ? [keys] : [];
  const parts: (readonly string[])[] = [];
  for (let i = 0; i < keys.length; i += chunk) parts.push(keys.slice(i, i + chunk));
  return parts;
}

/** PostgreSQL's `any(array)` of these keys, for `column = any(…)`. */
export function anyText(keys: readonly string[]) {
  return sql<string>`any(${sql.val(keys)}::text[])`;
}
