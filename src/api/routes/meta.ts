import { z } from 'zod';
import { openApiDocument } from '../openapi.js';
import { defineRoute, type Route } from '../route.js';
import { responseSchema } from '../schemas.js';

const OpenApi = responseSchema('OpenApiDocument', z.looseObject({ openapi: z.string() }).meta({ description: 'This document.' }));

/** The document itself, public: it says what exists, never what is stored. Built once, on first request. */
export function metaRoutes(all: () => readonly Route[]): Route[] {
  let doc: unknown;
  return [
    defineRoute({
      method: 'GET',
      path: '/openapi.json',
      operationId: 'getOpenApiDocument',
      summary: 'The OpenAPI 3.1 document of this API',
      tag: 'meta',
      scope: 'public',
      responses: { 200: { description: 'The document.', schema: OpenApi } },
      handle: async ({ deps }) => {
        doc ??= openApiDocument(all(), deps.version);
        return { status: 200, body: doc };
      },
    }),
  ];
}
