// The API token: from api.token_file when set (systemd LoadCredential), else from the
// environment. Problem texts name where the token was looked for, never its value.
import { readFile } from 'node:fs/promises';
import { TOKEN_ENV, type TokenSource } from './token-source.js';
import type { DaemonConfig } from './types.js';

/** Read the API token; `problem` says why there is none; `source` is where it was looked for. Called again on SIGHUP. */
export async function readToken(daemon: DaemonConfig, env: Record<string, string | undefined>): Promise<{ token?: string; problem?: string; source: TokenSource }> {
  const file = daemon.api.tokenFile;
  if (file !== undefined) {
    const source: TokenSource = { kind: 'file', file };
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      const code = (err as { code?: string }).code;
      const reason = code === 'ENOENT' ? 'it does not exist' : code === 'EACCES' || code === 'EPERM' ? 'permission denied' : code === 'EISDIR' ? 'it is a folder' : 'it cannot be read';
      return { problem: `cannot read the token file ${file} (api.token_file): ${reason}`, source };
    }
    const token = text.trim();
    if (token === '') return { problem: `the token file ${file} (api.token_file) is empty`, source };
    if (/\s/.test(token)) return { problem: `the token file ${file} (api.token_file) holds more than one word; it must hold only the token`, source };
    return { token, source };
  }
  const source: TokenSource = { kind: 'env', variable: TOKEN_ENV };
  const token = env[TOKEN_ENV]?.trim();
  if (token) {
    if (/\s/.test(token)) return { problem: `${TOKEN_ENV} holds more than one word; it must hold only the token`, source };
    return { token, source };
  }
  return { problem: `no API token: set api.token_file in the config, or the environment variable ${TOKEN_ENV}`, source };
}
