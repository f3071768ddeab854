import type { IncomingMessage, ServerResponse } from 'node:http';
import type { SimState } from './state.js';
import type { SimUser } from './types.js';
import type { Clock } from '../time/clock.js';
import type { Logger } from '../log/logger.js';

/** Everything a route handler may need about one request. */
export interface RouteContext {
  req: IncomingMessage;
  res: ServerResponse;
  user: SimUser;
  state: SimState;
  clock: Clock;
  url: URL;
  /** `http://host:port`, for page URLs and recording URLs. */
  origin: string;
  params: Record<string, string>;
  body: unknown;
  logger: Logger;
}

/** What a handler answers; the server writes it. `drop` destroys the socket instead. */
export interface RouteResult {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
  /** Set by make_call so that the drop_after_create fault can act after creation. */
  createdCall?: boolean;
}

export type Handler = (ctx: RouteContext) => RouteResult | Promise<RouteResult>;

/** A JSON answer. */
export function json(status: number, body: unknown, headers?: Record<string, string>): RouteResult {
  return headers ? { status, body, headers } : { status, body };
}

/** `{message}` error answer. */
export function message(status: number, text: string): RouteResult {
  return json(status, { message: text });
}

/** 422 `{message, errors}` answer. */
export function validationFailed(errors: Record<string, string[]>, text = 'Validation failed'): RouteResult {
  return json(422, { message: text, errors });
}

/** Writes a RouteResult as JSON. */
export function writeResult(res: ServerResponse, result: RouteResult): void {
  const text = JSON.stringify(result.body);
  res.writeHead(result.status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...result.headers,
  });
  res.end(text);
}

export const BODY_LIMIT = 1024 * 1024;

/** Reads a request body as text (up to BODY_LIMIT bytes; more is an error). */
export async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buf = chunk as Buffer;
    size += buf.length;
    if (size > BODY_LIMIT) throw new BodyTooLarge();
    chunks.push(buf);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export class BodyTooLarge extends Error {
  constructor() {
    super('request body too large');
  }
}

/** Whether a socket address is the loopback interface. */
export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  return address === '::1' || address.startsWith('127.') || address.startsWith('::ffff:127.');
}

/** A plain object (not an array, not null). */
export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
