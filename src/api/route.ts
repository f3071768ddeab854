import type { IncomingHttpHeaders } from 'node:http';
import type { z } from 'zod';
import type { ApiDeps } from './deps.js';

// A route of the API is data: its method, path, scope and zod schemas. The dispatcher
// (api.ts) validates requests with the schemas and the OpenAPI document (openapi.ts) is
// generated from the same objects, so what the server accepts and what the document says
// cannot drift apart.

export type Scope = 'read' | 'write' | 'public';
export type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/** A JSON answer, or JSON lines written as they are produced (the results export). */
export type RouteAnswer =
  | { status: number; body: unknown; headers?: Record<string, string> }
  | { status: number; lines: AsyncIterable<unknown>; headers?: Record<string, string> }
  /** JSON lines already serialised (the results export writes text): `write` waits while the client is slow. */
  | { status: number; text: (write: (chunk: string) => Promise<void>) => Promise<void>; headers?: Record<string, string> };

export interface RouteContext<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  headers: IncomingHttpHeaders;
  /** The API key's name; null on loopback with no key configured (see auth.ts). */
  keyName: string | null;
  deps: ApiDeps;
}

export interface ResponseSpec {
  description: string;
  /** A schema registered in schemas.ts (it becomes a component of the document). */
  schema?: z.ZodType;
  /** `application/json` unless said; the results export answers `application/jsonl`. */
  contentType?: 'application/json' | 'application/jsonl';
}

export interface Route<P = unknown, Q = unknown, B = unknown> {
  method: Method;
  /** OpenAPI-style, relative to /api/v1: `/campaigns/{name}/leads`. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tag: string;
  scope: Scope;
  params?: z.ZodType<P>;
  query?: z.ZodType<Q>;
  /** The body's schema (registered in schemas.ts); absent: the route takes no body. */
  body?: z.ZodType<B>;
  /**
   * A cheaper check run before the body's schema: it may say yes only to bodies the schema
   * accepts unchanged, and a body it refuses is judged by the schema (whose errors answer).
   * For bodies where the schema's walk is costly (10,000 leads). It runs before the body's
   * depth check (request.ts), so it must not recurse into what it does not accept.
   */
  bodyPrecheck?: (value: unknown) => boolean;
  /** Request headers the route reads (documented as parameters). */
  headers?: { name: string; description: string }[];
  /** Success answers; the problem answers are added by the document for every route. */
  responses: Record<number, ResponseSpec>;
  /** Problem answers of this route beyond those every route can give (409…), with what each means. */
  problems?: Record<number, string>;
  handle(ctx: RouteContext<P, Q, B>): Promise<RouteAnswer>;
}

/** Keeps a route's types (params, query, body) tied to its schemas. */
export function defineRoute<P = undefined, Q = undefined, B = undefined>(route: Route<P, Q, B>): Route {
  return route as unknown as Route;
}
