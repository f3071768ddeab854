// Where the daemon's API token comes from, said without the token: recorded in the daemon's
// row (heartbeat) so that `status`, a separate process, can say how to replace a token the
// service rejects. A file is reread on SIGHUP; an environment variable is fixed for the
// life of the process, so only a restart gives the daemon a new value.

export type TokenSource = { kind: 'file'; file: string } | { kind: 'env'; variable: string };

/** The variable the token is read from when api.token_file is not set. */
export const TOKEN_ENV = 'CAMPAIGND_API_TOKEN';

/** As stored in daemons.token_source: `file:PATH` or `env:NAME`. */
export function encodeTokenSource(source: TokenSource): string {
  return source.kind === 'file' ? `file:${source.file}` : `env:${source.variable}`;
}

/** The stored text back; null when absent (a daemon older than the column) or unreadable. */
export function decodeTokenSource(text: string | null | undefined): TokenSource | null {
  if (!text) return null;
  if (text.startsWith('file:')) return { kind: 'file', file: text.slice(5) };
  if (text.startsWith('env:')) return { kind: 'env', variable: text.slice(4) };
  return null;
}

/** What to do to give the daemon a working token, for where it reads it from. */
export function tokenAdvice(source: TokenSource | null): string {
  if (source?.kind === 'file') return `the token is read from ${source.file} (api.token_file): write the working token there and send SIGHUP (systemctl reload campaignd)`;
  if (source?.kind === 'env') return `the token is read from $${source.variable}: restart the daemon with the working token in it (a running process keeps the value it started with)`;
  return `give the daemon a working token: in its api.token_file, then send SIGHUP; or in $${TOKEN_ENV}, then restart it`;
}
