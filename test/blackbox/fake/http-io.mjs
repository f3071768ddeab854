// Reading requests and writing answers on node:http, shared by the API and the control
// interface. Nothing here knows about calls or faults.

const MAX_BODY = 1024 * 1024;

/** The request body parsed as JSON; `undefined` when empty; throws SyntaxError on bad JSON. */
export async function readJson(req) {
  const chunks = [];
  let size = 0;
  for await (const chunk of req) {
    size += chunk.length;
    if (size > MAX_BODY) throw new RangeError('body over 1 MiB');
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  return text.trim() === '' ? undefined : JSON.parse(text);
}

/** Writes `body` as JSON with `status` and extra `headers`. */
export function sendJson(res, status, body, headers = {}) {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

/** Writes an HTML page (a login page, a proxy's error page). */
export function sendHtml(res, status, html, headers = {}) {
  res.writeHead(status, { 'content-type': 'text/html; charset=UTF-8', 'content-length': Buffer.byteLength(html), ...headers });
  res.end(html);
}

/**
 * Breaks the connection without an answer: a TCP reset where Node can send one, so the
 * client sees ECONNRESET rather than a clean end of stream.
 */
export function resetConnection(req) {
  const socket = req.socket;
  if (typeof socket.resetAndDestroy === 'function') socket.resetAndDestroy();
  else socket.destroy();
}

/** Resolves after `ms` real milliseconds (latency injection, webhook delay). */
export function delay(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
