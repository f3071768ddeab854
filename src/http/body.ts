import type { IncomingMessage } from 'node:http';

/** The request body, or why it could not be read. */
export type BodyResult =
  | { kind: 'ok'; body: Buffer }
  | { kind: 'too-large' }
  | { kind: 'aborted' };

/** Default webhook body limit: 1 MiB. */
export const BODY_LIMIT_BYTES = 1024 * 1024;

/** What a client may send the daemon at most: an API request, a lead file uploaded from the dashboard. */
export const CLIENT_BODY_LIMIT_BYTES = 10 * 1024 * 1024;

/**
 * Reads a request body of at most `limit` bytes. A declared Content-Length over the
 * limit is refused before reading anything; a body that grows past it (chunked) stops
 * being read at once, so a hostile sender never makes us buffer more than `limit`.
 */
export function readBody(req: IncomingMessage, limit: number = BODY_LIMIT_BYTES): Promise<BodyResult> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    req.pause();
    return Promise.resolve({ kind: 'too-large' });
  }
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (result: BodyResult): void => {
      if (done) return;
      done = true;
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
      resolve(result);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        chunks.length = 0;
        req.pause();
        finish({ kind: 'too-large' });
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => finish({ kind: 'ok', body: Buffer.concat(chunks, size) });
    const onError = (): void => finish({ kind: 'aborted' });
    const onClose = (): void => {
      if (!req.complete) finish({ kind: 'aborted' });
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}
