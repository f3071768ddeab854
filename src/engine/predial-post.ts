import { Agent, request } from 'undici';
import type { PredialPost } from './predial.js';
import { PREDIAL_MAX_ANSWER_BYTES } from './policy.js';
import { readLimited } from '../service/http-transport.js';

// The HTTP side of the pre-dial check (src/engine/predial.ts), made by the composition
// root: one keep-alive agent for every campaign's check endpoint. The timeout is the
// caller's (it aborts `signal` on the engine's clock); the agent's own timeouts are only a
// backstop for a connection that hangs after the caller gave up.

const BACKSTOP_MS = 60_000;

/** A PredialPost over undici; `close()` ends its connections. */
export function createPredialPost(): { post: PredialPost; close(): Promise<void> } {
  const agent = new Agent({ headersTimeout: BACKSTOP_MS, bodyTimeout: BACKSTOP_MS, connect: { timeout: BACKSTOP_MS } });
  const post: PredialPost = async (url, body, headers, signal) => {
    const res = await request(url, { method: 'POST', body, headers, dispatcher: agent, signal });
    return { status: res.statusCode, body: await readLimited(res.body, PREDIAL_MAX_ANSWER_BYTES) };
  };
  return { post, close: () => agent.close() };
}
