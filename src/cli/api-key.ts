// `campaignd api-key create|list|revoke`: the keys of the HTTP API (/api/v1). The store
// keeps a key's hash and prefix only, so `create` is the one time a key is shown. The
// running daemon reads the keys on every request: a new key works and a revoked one is
// refused at once, on every instance sharing the database.
import { API_KEY_SCOPES, apiKeyNameProblem, createApiKey } from '../api/keys.js';
import { listApiKeys, revokeApiKey, type ApiKeyListing } from '../store/api-keys.js';
import { hasMigration } from '../store/migrate.js';
import type { ApiKeyScope } from '../store/types.js';
import { systemClock } from '../time/clock.js';
import { formatLocal } from '../time/duration-format.js';
import { parseCommandArgs } from './args.js';
import { CliError, EXIT, type CliIo } from './io.js';
import { openReadStore, openWriteStore } from './open-store.js';

export const API_KEY_HELP = `Usage: campaignd api-key create NAME --scope read|write | list | revoke NAME
                          [--config FILE] [--json]

The keys of the HTTP API (/api/v1 on http.listen). A client sends its key as
"Authorization: Bearer KEY". The database keeps only a hash of each key and its first
12 characters (its prefix), so a key is shown once, when it is created.

  create NAME     a new key named NAME (letters, digits, ".", "_", "-"; unique among the
                  keys not revoked), printed once on stdout
  list            every key: name, scope, prefix, when created, last used (recorded at
                  most once a minute) and revoked; never the key
  revoke NAME     the key stops working at once, on every daemon on this database

  --scope S       read: the GET routes only; write: every route (create needs it)
  --config FILE   daemon config (default: $CAMPAIGND_CONFIG, then ./config/campaignd.yaml)
  --json          one JSON document on stdout
  -h, --help      this help

On a loopback http.listen the API answers without a key until the first key is created;
from then on (and always on any other address) every request needs one.

Exit status: 0 done; 1 no key by that name, or the name is taken; 2 bad usage; 3 the
database is newer than this campaignd.
`;

/** `campaignd api-key …`. */
export async function apiKeyCommand(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandArgs(
    { args, allowPositionals: true, options: { config: { type: 'string' }, scope: { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } } },
    API_KEY_HELP,
  );
  if (values.help) {
    io.stdout.write(API_KEY_HELP);
    return EXIT.ok;
  }
  const [action, ...rest] = positionals;
  const json = values.json === true;
  if (action !== 'create' && values.scope !== undefined) throw new CliError('--scope belongs to api-key create (see --help)', EXIT.usage);
  switch (action) {
    case 'create':
      return create(oneName(action, rest), scopeOf(values.scope), values.config, json, io);
    case 'list':
      if (rest.length > 0) throw new CliError('list takes no arguments (see --help)', EXIT.usage);
      return list(values.config, json, io);
    case 'revoke':
      return revoke(oneName(action, rest), values.config, json, io);
    default:
      throw new CliError('expected: api-key create NAME --scope read|write | list | revoke NAME (see --help)', EXIT.usage);
  }
}

function oneName(action: string, rest: string[]): string {
  if (rest.length !== 1) throw new CliError(`expected: api-key ${action} NAME${action === 'create' ? ' --scope read|write' : ''} (see --help)`, EXIT.usage);
  const problem = apiKeyNameProblem(rest[0]!);
  if (problem) throw new CliError(problem, EXIT.usage);
  return rest[0]!;
}

function scopeOf(given: string | undefined): ApiKeyScope {
  if (given === undefined) throw new CliError('api-key create needs --scope read (GET routes only) or --scope write (every route)', EXIT.usage);
  const scope = API_KEY_SCOPES.find((s) => s === given);
  if (!scope) throw new CliError(`--scope ${JSON.stringify(given)} is not a scope: use --scope read or --scope write`, EXIT.usage);
  return scope;
}

async function create(name: string, scope: ApiKeyScope, configFlag: string | undefined, json: boolean, io: CliIo): Promise<number> {
  const store = await openWriteStore(configFlag, io);
  try {
    const made = await createApiKey(store.db, name, scope, systemClock.now());
    if (!made) throw new CliError(`a key named "${name}" exists already: choose another name, or revoke it first (campaignd api-key revoke ${name})`, EXIT.problems);
    if (json) io.stdout.write(`${JSON.stringify({ name, scope, prefix: made.prefix, key: made.key }, null, 2)}\n`);
    else io.stdout.write(`${made.key}\n`);
    io.stderr.write(`API key "${name}" (${scope}, prefix ${made.prefix}) created. This is the only time it is shown: store it now.\n`);
    return EXIT.ok;
  } finally {
    await store.close();
  }
}

async function list(configFlag: string | undefined, json: boolean, io: CliIo): Promise<number> {
  const store = await openReadStore(configFlag, io);
  let keys: ApiKeyListing[];
  try {
    // A database the daemon has not brought to this version yet has no keys.
    keys = (await hasMigration(store.db, '0014_api_keys')) ? await listApiKeys(store.db) : [];
  } finally {
    await store.close();
  }
  const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());
  if (json) {
    const out = keys.map((k) => ({ name: k.name, scope: k.scope, prefix: k.prefix, created_at: iso(k.created_at), last_used_at: iso(k.last_used_at), revoked_at: iso(k.revoked_at) }));
    io.stdout.write(`${JSON.stringify({ keys: out }, null, 2)}\n`);
    return EXIT.ok;
  }
  const when = (ms: number | null, none: string): string => (ms === null ? none : formatLocal(ms, 'UTC'));
  const rows = [['NAME', 'SCOPE', 'PREFIX', 'CREATED', 'LAST USED', 'REVOKED'], ...keys.map((k) => [k.name, k.scope, `${k.prefix}…`, when(k.created_at, '-'), when(k.last_used_at, 'never'), when(k.revoked_at, '-')])];
  if (keys.length > 0) {
    const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
    for (const r of rows) io.stdout.write(`${r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  ')}\n`);
  }
  const active = keys.filter((k) => k.revoked_at === null).length;
  io.stdout.write(`${active} active API key${active === 1 ? '' : 's'}${keys.length > active ? `, ${keys.length - active} revoked` : ''}\n`);
  return EXIT.ok;
}

async function revoke(name: string, configFlag: string | undefined, json: boolean, io: CliIo): Promise<number> {
  const store = await openWriteStore(configFlag, io);
  try {
    if (!(await revokeApiKey(store.db, name, systemClock.now()))) throw new CliError(`no active API key named "${name}" (campaignd api-key list shows them)`, EXIT.problems);
    if (json) io.stdout.write(`${JSON.stringify({ name, revoked: true }, null, 2)}\n`);
    else io.stdout.write(`API key "${name}" revoked: requests with it are refused from now on\n`);
    return EXIT.ok;
  } finally {
    await store.close();
  }
}
