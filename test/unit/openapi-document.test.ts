// The OpenAPI document in the repository (docs/openapi.json, written by `npm run build`) is
// exactly what the routes generate, the client types the API tests use are exactly what
// openapi-typescript makes of it, and every schema in it is valid JSON Schema 2020-12.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { openApiDocument } from '../../src/api/openapi.js';
import { apiRoutes } from '../../src/api/routes/index.js';
import { apiTypesSource } from '../helpers/api-types-source.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const version = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const generated = openApiDocument(apiRoutes, version);

describe('the OpenAPI document', () => {
  it('in docs/openapi.json is what the routes generate (run `npm run build` after changing a route)', () => {
    const file = JSON.parse(fs.readFileSync(path.join(ROOT, 'docs/openapi.json'), 'utf8')) as unknown;
    expect(file).toEqual(generated);
  });

  it('gives test/helpers/api-types.ts (run `npm run api:types` after changing a route)', async () => {
    expect(fs.readFileSync(path.join(ROOT, 'test/helpers/api-types.ts'), 'utf8')).toBe(await apiTypesSource(generated));
  });

  it('holds only valid JSON Schema 2020-12, and every $ref resolves', () => {
    const ajv = new Ajv2020({ strict: false });
    addFormats.default(ajv);
    ajv.addSchema(generated as object, 'doc');
    const schemas = (generated.components as { schemas: Record<string, unknown> }).schemas;
    for (const id of Object.keys(schemas)) expect(() => ajv.compile({ $ref: `doc#/components/schemas/${id}` }), id).not.toThrow();
    const refs = JSON.stringify(generated).match(/"\$ref":"#\/components\/schemas\/[^"]+"/g) ?? [];
    for (const ref of refs) expect(Object.keys(schemas)).toContain(ref.slice('"$ref":"#/components/schemas/'.length, -1));
  });

  it('names each operation once and documents a problem answer for every refusal the dispatcher makes', () => {
    const ids = apiRoutes.map((r) => r.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    const paths = generated.paths as Record<string, Record<string, { responses: Record<string, unknown>; security?: unknown[] }>>;
    for (const route of apiRoutes) {
      const op = paths[`/api/v1${route.path}`]![route.method.toLowerCase()]!;
      expect(Object.keys(op.responses)).toContain('500');
      if (route.scope !== 'public') expect(Object.keys(op.responses), route.operationId).toContain('401');
      if (route.scope === 'write') expect(Object.keys(op.responses), route.operationId).toContain('403');
      if (route.body) expect(Object.keys(op.responses), route.operationId).toEqual(expect.arrayContaining(['400', '413', '415', '422']));
    }
  });
});
