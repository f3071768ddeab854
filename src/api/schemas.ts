import { z } from 'zod';

// The schemas that become components of the OpenAPI document. Two registries, because a
// request schema is documented as what a client may send (zod's input) and a response
// schema as what the server sends (its output); a schema is registered in one of them
// with the component name the document gives it.

export const requestSchemas = z.registry<{ id: string }>();
export const responseSchemas = z.registry<{ id: string }>();

/** Registers a request body schema under a component name. */
export function requestSchema<T extends z.ZodType>(id: string, schema: T): T {
  requestSchemas.add(schema, { id });
  return schema;
}

/** Registers a response body schema under a component name. */
export function responseSchema<T extends z.ZodType>(id: string, schema: T): T {
  responseSchemas.add(schema, { id });
  return schema;
}

export const Problem = responseSchema(
  'Problem',
  z
    .object({
      type: z.string(),
      title: z.string(),
      status: z.number().int(),
      detail: z.string(),
      errors: z.array(z.object({ pointer: z.string(), message: z.string() })).optional(),
    })
    .meta({ description: 'An RFC 9457 problem document (application/problem+json).' }),
);
