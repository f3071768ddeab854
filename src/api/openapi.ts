import { z } from 'zod';
import { API_PREFIX } from './api.js';
import type { Route } from './route.js';
import { requestSchemas, responseSchemas } from './schemas.js';

// The OpenAPI 3.1 document, generated from the routes and their zod schemas (zod 4 writes
// JSON Schema 2020-12, the dialect OpenAPI 3.1 uses). The daemon serves it at
// /api/v1/openapi.json and the build writes it to docs/openapi.json; a test fails when the
// file in the repository is not what the routes generate.

const TARGET = 'draft-2020-12' as const;
const ref = (id: string): string => `#/components/schemas/${id}`;

type JsonObject = Record<string, unknown>;

/** Problem answers every route can give, beside its own successes. */
function problemStatuses(route: Route): Record<number, string> {
  const out: Record<number, string> = {};
  if (route.params || route.query) out[400] = 'The path or query is malformed.';
  if (route.scope !== 'public') out[401] = 'No key, or a key that is unknown or revoked.';
  if (route.scope === 'write') out[403] = 'A read key on a write route.';
  if (route.params) out[404] = 'What the path names does not exist.';
  if (route.body) {
    out[400] = 'Malformed JSON, or a body nested too deeply.';
    out[413] = 'The body is over 10 MB.';
    out[415] = 'The body is not JSON.';
    out[422] = 'The body does not fit its schema; `errors` lists each field.';
  }
  Object.assign(out, route.problems);
  out[500] = 'campaignd failed; the daemon log says why.';
  return out;
}

export function openApiDocument(routes: readonly Route[], version: string): JsonObject {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const path = `${API_PREFIX}${route.path}`;
    paths[path] ??= {};
    paths[path][route.method.toLowerCase()] = operation(route);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'campaignd API',
      version,
      description:
        'Add leads to running campaigns and read what happened. Requests carry `Authorization: Bearer KEY` (keys come from `campaignd api-key create`); refusals are RFC 9457 problem documents.',
    },
    paths,
    components: {
      schemas: { ...components(requestSchemas, 'input'), ...components(responseSchemas, 'output') },
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'An API key from `campaignd api-key create NAME --scope read|write`.' } },
    },
  };
}

function operation(route: Route): JsonObject {
  const parameters: JsonObject[] = [
    ...parametersOf(route.params, 'path'),
    ...parametersOf(route.query, 'query'),
    ...(route.headers ?? []).map((h) => ({ name: h.name, in: 'header', required: false, description: h.description, schema: { type: 'string' } })),
  ];
  const responses: Record<string, unknown> = {};
  for (const [status, spec] of Object.entries(route.responses)) {
    const contentType = spec.contentType ?? 'application/json';
    responses[status] = { description: spec.description, ...(spec.schema ? { content: { [contentType]: { schema: schemaRef(spec.schema, 'output') } } } : {}) };
  }
  for (const [status, description] of Object.entries(problemStatuses(route))) {
    responses[status] ??= { description, content: { 'application/problem+json': { schema: { $ref: ref('Problem') } } } };
  }
  return {
    operationId: route.operationId,
    summary: route.summary,
    ...(route.description ? { description: route.description } : {}),
    tags: [route.tag],
    ...(route.scope === 'public' ? { security: [] } : { security: [{ bearer: [] }], 'x-scope': route.scope }),
    ...(parameters.length ? { parameters } : {}),
    ...(route.body ? { requestBody: { required: true, content: { 'application/json': { schema: schemaRef(route.body, 'input') } } } } : {}),
    responses,
  };
}

function parametersOf(schema: z.ZodType | undefined, where: 'path' | 'query'): JsonObject[] {
  if (!schema) return [];
  const json = z.toJSONSchema(schema, { target: TARGET, io: 'input', unrepresentable: 'any' }) as JsonObject;
  const properties = (json.properties ?? {}) as Record<string, JsonObject>;
  const required = new Set((json.required ?? []) as string[]);
  return Object.entries(properties).map(([name, prop]) => {
    const { description, ...rest } = prop;
    return { name, in: where, required: where === 'path' || required.has(name), ...(description ? { description } : {}), schema: rest };
  });
}

function schemaRef(schema: z.ZodType, io: 'input' | 'output'): JsonObject {
  const id = (io === 'input' ? requestSchemas : responseSchemas).get(schema)?.id;
  // A body is always a named component: clients generated from the document get a type name for it.
  if (!id) throw new Error(`an API ${io === 'input' ? 'request' : 'response'} body schema is not registered (src/api/schemas.ts: ${io === 'input' ? 'requestSchema' : 'responseSchema'})`);
  return { $ref: ref(id) };
}

function components(registry: typeof requestSchemas, io: 'input' | 'output'): Record<string, JsonObject> {
  const { schemas } = z.toJSONSchema(registry, { target: TARGET, io, unrepresentable: 'any', uri: ref }) as { schemas: Record<string, JsonObject> };
  return Object.fromEntries(Object.entries(schemas).map(([id, s]) => [id, clean(s)]));
}

/** Drops the per-schema `$schema` and `$id`: inside an OpenAPI 3.1 document the dialect is the document's. */
function clean(schema: JsonObject): JsonObject {
  const { $schema: _s, $id: _i, ...rest } = schema;
  return rest;
}
