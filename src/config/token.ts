// The API token: from api.token_file when set (systemd LoadCredential), else from the
// environment. Problem texts name where the token was looked for, never its value.
import { readFile } from 'node:fs/promises';
import { TOKEN_ENV, type TokenSource } from './token-source.js';
import type { AccountConfig, DaemonConfig } from './types.js';

/** Read the API token; `problem` says why there is none; `source` is where it was looked for. Called again on SIGHUP. */
export async function readToken(daemon: DaemonConfig, env: Record<string, string | undefined>): Promise<TokenRead> {
  return readTokenAt(daemon.api.tokenFile !== undefined ? { kind: 'file', file: daemon.api.tokenFile } : { kind: 'env', variable: TOKEN_ENV }, 'api.token_file', env);
}

/** One account's token (accounts: in the daemon file); without accounts:, the api: block's (readToken). */
export async function readAccountToken(daemon: DaemonConfig, account: AccountConfig, env: Record<string, string | undefined>): Promise<TokenRead> {
  const i = daemon.accounts?.findIndex((a) => a.name === account.name) ?? -1;
  if (i < 0) return readToken(daemon, env);
  const source: TokenSource = account.tokenFile !== undefined ? { kind: 'file', file: account.tokenFile } : { kind: 'env', variable: account.tokenEnv ?? TOKEN_ENV };
  return readTokenAt(source, `accounts[${i}].token_file`, env);
}

export interface TokenRead {
  token?: string;
  problem?: string;
  source: TokenSource;
}

/** The token from its file (`field` names the setting in problems) or its variable; never the value in a problem. */
async function readTokenAt(source: TokenSource, field: string, env: Record<string, string | undefined>): Promise<TokenRead> {
  if (source.kind === 'file') {
    const file = source.file;
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      const code = (err as { code?: string }).code;
      const reason = code === 'ENOENT' ? 'it does not exist' : code === 'EACCES' || code === 'EPERM' ? 'permission denied' : code === 'EISDIR' ? 'it is a folder' : 'it cannot be read';
      return { problem: `cannot read the token file ${file} (${field}): ${reason}`, source };
    }
    const token = text.trim();
    if (token === '') return { problem: `the token file ${file} (${field}) is empty`, source };
    if (/\s/.test(token)) return { problem: `the token file ${file} (${field}) holds more than one word; it must hold only the token`, source };
    return { token, source };
  }
  const variable = source.variable;
  const token = env[variable]?.trim();
  if (token) {
    if (/\s/.test(token)) return { problem: `${variable} holds more than one word; it must hold only the token`, source };
    return { token, source };
  }
  if (variable === TOKEN_ENV) return { problem: `no API token: set api.token_file in the config, or the environment variable ${TOKEN_ENV}`, source };
  return { problem: `no API token: the environment variable ${variable} is not set or empty`, source };
}
