// Addresses in the daemon file: the service's base URL and the daemon's own listen address.
import { describe, type ProblemSink } from './problems.js';
import type { FieldPath } from './source.js';

/** Validate an http(s) base URL; never echoes one that carries credentials. */
export function checkUrl(text: string, path: FieldPath, sink: ProblemSink): string | undefined {
  const shown = text.includes('@') ? 'the URL' : describe(text);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    sink.error(path, `${shown} is not a URL`, { hint: 'write the service address with its scheme, e.g. https://service.example' });
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    sink.error(path, `${shown} is not an http(s) URL`, { hint: 'use a URL starting with https:// (or http:// for a local simulator)' });
    return undefined;
  }
  if (url.username || url.password) {
    sink.error(path, 'the URL must not carry a user name or password', { hint: 'put the token in api.token_file or CAMPAIGND_API_TOKEN' });
    return undefined;
  }
  if (url.search || url.hash) {
    sink.error(path, `${shown} must not have a query or fragment`, { hint: 'give only the base address, e.g. https://service.example' });
    return undefined;
  }
  return text.replace(/\/+$/, '');
}

/** `host:port` or `[v6]:port` → parts. */
export function parseListen(text: string, path: FieldPath, sink: ProblemSink): { host: string; port: number } | undefined {
  const m = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:\s[\]]+)):(\d{1,5})$/.exec(text);
  const port = m ? Number(m[3]) : NaN;
  if (!m || port > 65535) {
    sink.error(path, `${describe(text)} is not host:port`, { hint: 'write e.g. 127.0.0.1:9464, 0.0.0.0:9464 or [::1]:9464 (port 0 to 65535)' });
    return undefined;
  }
  return { host: m[1] ?? m[2] ?? '', port };
}
