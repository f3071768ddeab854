import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Clock } from '../time/clock.js';
import type { Logger } from '../log/logger.js';
import type { Metrics } from './metrics.js';
import { BODY_LIMIT_BYTES, readBody } from './body.js';
import { sendJson } from './respond.js';
import { secretMatches } from './secret.js';

/** What the engine gives the HTTP surface to receive post-call webhooks. */
export interface WebhookSink {
  /** The shared secret, read at each delivery so that a reload takes effect; undefined = refuse all. */
  secret: () => string | undefined;
  /** Applies one delivery; `accepted: false` means understood but not applied (unknown call id…). */
  handle: (payload: unknown, receivedAt: number) => Promise<{ accepted: boolean; detail?: string; invalid?: boolean }>;
}

export interface WebhookRouteDeps {
  sink: WebhookSink;
  metrics: Metrics;
  logger: Logger;
  clock: Clock;
  bodyLimit?: number;
}

/** The header a sender may use instead of `?secret=`. */
export const SECRET_HEADER = 'x-campaignd-secret';

/**
 * Handles `POST /webhooks/post-call`: secret first (before reading a byte of body),
 * then size, then JSON, then the engine's answer. Logs carry the path only: the full
 * URL may hold `?secret=`.
 */
export async function handleWebhook(req: IncomingMessage, res: ServerResponse, url: URL, deps: WebhookRouteDeps): Promise<void> {
  const { metrics, logger, sink } = deps;
  const receivedAt = deps.clock.now();
  const expected = sink.secret();
  if (expected === undefined || expected === '') {
    metrics.webhookDeliveries.inc({ result: 'refused' });
    logger.warn({ path: url.pathname }, 'post-call webhook refused: no webhook secret is configured');
    sendJson(
      res,
      503,
      { ok: false, error: 'no webhook secret is configured on this daemon, so deliveries are refused; polling still closes every call' },
      { close: true },
    );
    return;
  }
  const header = req.headers[SECRET_HEADER];
  const given = (Array.isArray(header) ? header[0] : header) ?? url.searchParams.get('secret');
  if (!secretMatches(given, expected)) {
    metrics.webhookDeliveries.inc({ result: 'refused' });
    logger.warn({ path: url.pathname, secretGiven: given != null }, 'post-call webhook refused: wrong or missing secret');
    sendJson(res, 401, { ok: false, error: 'wrong or missing webhook secret' }, { close: true });
    return;
  }

  const limit = deps.bodyLimit ?? BODY_LIMIT_BYTES;
  const read = await readBody(req, limit);
  if (read.kind === 'aborted') {
    metrics.webhookDeliveries.inc({ result: 'invalid' });
    logger.warn({ path: url.pathname }, 'post-call webhook aborted by the sender');
    return;
  }
  if (read.kind === 'too-large') {
    metrics.webhookDeliveries.inc({ result: 'invalid' });
    logger.warn({ path: url.pathname, limit }, 'post-call webhook refused: body too large');
    sendJson(res, 413, { ok: false, error: `body larger than ${limit} bytes` }, { close: true });
    return;
  }
  let payload: unknown;
  try {
    payload = JSON.parse(read.body.toString('utf8'));
  } catch {
    metrics.webhookDeliveries.inc({ result: 'invalid' });
    logger.warn({ path: url.pathname, bytes: read.body.length }, 'post-call webhook refused: body is not JSON');
    sendJson(res, 400, { ok: false, error: 'body is not valid JSON' });
    return;
  }

  let answer: { accepted: boolean; detail?: string; invalid?: boolean };
  try {
    answer = await sink.handle(payload, receivedAt);
  } catch (err) {
    logger.error({ err, path: url.pathname }, 'post-call webhook handler failed');
    sendJson(res, 500, { ok: false, error: 'internal error while applying the webhook' });
    return;
  }
  if (answer.accepted) {
    metrics.webhookDeliveries.inc({ result: 'accepted' });
    logger.debug({ path: url.pathname, detail: answer.detail }, 'post-call webhook accepted');
    sendJson(res, 200, answer.detail ? { ok: true, detail: answer.detail } : { ok: true });
    return;
  }
  // JSON, but not a post-call webhook (no id, status a number…): the sender's error, said
  // as such, so that a wrong integration is noticed rather than silently counted unmatched.
  if (answer.invalid) {
    metrics.webhookDeliveries.inc({ result: 'invalid' });
    logger.warn({ path: url.pathname, detail: answer.detail }, 'post-call webhook refused: not a post-call webhook payload');
    sendJson(res, 400, { ok: false, error: answer.detail ?? 'invalid payload' });
    return;
  }
  // 202: received and understood, nothing to apply (unknown call, already final). A
  // 2xx keeps the sender from retrying something that will never match.
  metrics.webhookDeliveries.inc({ result: 'unmatched' });
  logger.info({ path: url.pathname, detail: answer.detail }, 'post-call webhook not applied');
  sendJson(res, 202, { ok: false, detail: answer.detail ?? 'not applied' });
}
