// The API as a client sees it: a client generated from the OpenAPI document
// (openapi-typescript's types in api-types.ts, openapi-fetch), the way a CRM's developer
// would call campaignd, and a check of every answer against the document the server serves
// (ajv, JSON Schema 2020-12): an answer the document does not describe fails the test.
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import createClient, { type Client, type Middleware } from 'openapi-fetch';
import type { paths } from './api-types.js';

const DOC_ID = 'campaignd-openapi.json';

/** Checks answers against one OpenAPI document; schemas are compiled once per (path, method, status, type). */
export class ResponseChecker {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  private readonly compiled = new Map<string, ValidateFunction>();
  /** Every answer checked, as "METHOD path status": tests assert what they covered. */
  readonly seen: string[] = [];

  constructor(readonly doc: { paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, unknown> }> }>> }) {
    addFormats.default(this.ajv);
    this.ajv.addSchema(doc as object, DOC_ID);
  }

  /** Throws when `body` (parsed JSON, or each line of JSON lines) is not what the document says `path` answers with `status`. */
  check(method: string, path: string, status: number, contentType: string, body: unknown): void {
    const m = method.toLowerCase();
    const operation = this.doc.paths[path]?.[m];
    if (!operation) throw new Error(`${method} ${path} is not in the OpenAPI document`);
    const response = operation.responses[String(status)];
    if (!response) throw new Error(`${method} ${path} answered ${status}, which the document does not list (${Object.keys(operation.responses).join(', ')})`);
    const type = contentType.split(';')[0]!.trim();
    this.seen.push(`${method.toUpperCase()} ${path} ${status}`);
    if (!response.content) {
      if (body !== undefined && body !== '') throw new Error(`${method} ${path} ${status}: the document says no body, got one`);
      return;
    }
    if (!(type in response.content)) throw new Error(`${method} ${path} ${status}: content type ${type} is not documented (${Object.keys(response.content).join(', ')})`);
    const key = `${path} ${m} ${status} ${type}`;
    let validate = this.compiled.get(key);
    if (!validate) {
      const pointer = ['paths', path, m, 'responses', String(status), 'content', type, 'schema'].map((s) => s.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');
      validate = this.ajv.compile({ $ref: `${DOC_ID}#/${pointer}` });
      this.compiled.set(key, validate);
    }
    const values = type === 'application/jsonl' ? String(body ?? '').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as unknown) : [body];
    for (const value of values) {
      if (!validate(value)) throw new Error(`${method} ${path} ${status}: the answer does not fit the document: ${this.ajv.errorsText(validate.errors)}\n${JSON.stringify(value).slice(0, 500)}`);
    }
  }
}

/** Fetches the document the server serves. */
export async function fetchOpenApi(baseUrl: string): Promise<ResponseChecker['doc']> {
  const res = await fetch(`${baseUrl}/api/v1/openapi.json`);
  if (res.status !== 200) throw new Error(`openapi.json answered ${res.status}`);
  return (await res.json()) as ResponseChecker['doc'];
}

export type ApiClient = Client<paths>;

/** A generated client for `baseUrl` whose every answer is checked against the document. */
export function apiClient(baseUrl: string, checker: ResponseChecker, key?: string): ApiClient {
  const client = createClient<paths>({ baseUrl, ...(key ? { headers: { Authorization: `Bearer ${key}` } } : {}) });
  const checking: Middleware = {
    async onResponse({ request, response, schemaPath }) {
      const text = await response.clone().text();
      const type = response.headers.get('content-type') ?? '';
      const body = text === '' ? undefined : type.includes('jsonl') ? text : (JSON.parse(text) as unknown);
      checker.check(request.method, schemaPath, response.status, type, body);
      return undefined;
    },
  };
  client.use(checking);
  return client;
}

/** A raw request (for what a generated client cannot send: broken JSON, wrong types) whose answer is still checked. */
export async function rawRequest(
  checker: ResponseChecker,
  baseUrl: string,
  method: string,
  schemaPath: string,
  url: string,
  init: { body?: string | Buffer; headers?: Record<string, string> } = {},
): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await fetch(`${baseUrl}${url}`, { method, ...(init.body !== undefined ? { body: init.body } : {}), headers: init.headers ?? {} });
  const text = await res.text();
  const type = res.headers.get('content-type') ?? '';
  const body = text === '' ? undefined : type.includes('jsonl') ? text : JSON.parse(text);
  checker.check(method, schemaPath, res.status, type, body);
  return { status: res.status, body, headers: res.headers };
}
