// JSON Schema (draft 2020-12) for campaign files, generated from CAMPAIGN_SPEC so that it cannot
// drift from the checker. config/campaign.schema.json is this output; a unit test compares them.
// Regenerate with: npx tsx src/config/write-schema.ts
import { CAMPAIGN_SPEC } from './campaign-spec.js';
import { DURATION_PATTERN } from './duration.js';
import type { Field, Spec } from './spec.js';

type JsonSchema = Record<string, unknown>;

const TIME_JSON_PATTERN = '^([01]?[0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9])?$';

/** The campaign file's JSON Schema as a plain object. */
export function campaignJsonSchema(): JsonSchema {
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: 'https://campaignd.invalid/campaign.schema.json',
    title: 'campaignd campaign file',
    description: 'One outbound call campaign (every field: docs/configuration.md). Checked fully by `campaignd validate`.',
    ...specSchema(CAMPAIGN_SPEC),
  };
}

/** The schema as the file's text (stable key order, two-space indent, trailing newline). */
export function campaignJsonSchemaText(): string {
  return `${JSON.stringify(campaignJsonSchema(), null, 2)}\n`;
}

function fieldSchema(field: Field): JsonSchema {
  const schema: JsonSchema = { description: field.description, ...specSchema(field.spec) };
  if (field.default !== undefined && field.spec.kind !== 'object') schema.default = field.default;
  if (field.example !== undefined) schema.examples = [field.example];
  return schema;
}

function specSchema(spec: Spec): JsonSchema {
  switch (spec.kind) {
    case 'integer': {
      const s: JsonSchema = { type: 'integer' };
      if (spec.min !== undefined) s.minimum = spec.min;
      if (spec.max !== undefined) s.maximum = spec.max;
      return s;
    }
    case 'amount': {
      const s: JsonSchema = { type: 'number' };
      if (spec.min !== undefined) s.minimum = spec.min;
      if (spec.max !== undefined) s.maximum = spec.max;
      return s;
    }
    case 'duration': {
      const seconds: JsonSchema = { type: 'integer' };
      if (spec.min !== undefined) seconds.minimum = spec.min;
      if (spec.max !== undefined) seconds.maximum = spec.max;
      return { oneOf: [seconds, { type: 'string', minLength: 1, pattern: DURATION_PATTERN.source }] };
    }
    case 'boolean':
      return { type: 'boolean' };
    case 'string':
      return spec.pattern ? { type: 'string', pattern: spec.pattern.source } : { type: 'string', minLength: 1 };
    case 'enum':
      return { type: 'string', enum: [...spec.values, ...Object.keys(spec.aliases ?? {})] };
    case 'time':
      return { type: 'string', pattern: TIME_JSON_PATTERN };
    case 'zone':
      return { type: 'string', minLength: 1 };
    case 'date':
      return { type: 'string', format: 'date', pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$' };
    case 'country':
      return { type: 'string', pattern: '^[A-Za-z]{2}$' };
    case 'url':
      return { type: 'string', format: 'uri', pattern: '^https?://' };
    case 'path':
      return { type: 'string', minLength: 1 };
    case 'listen':
      return { type: 'string', pattern: '^(\\[[0-9A-Fa-f:.]+\\]|[^:\\s\\[\\]]+):[0-9]{1,5}$' };
    case 'env-name':
      return { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]*$' };
    case 'forbidden':
      return { not: {} };
    case 'list': {
      const s: JsonSchema = { type: 'array', items: specSchema(spec.item) };
      if (spec.minItems !== undefined) s.minItems = spec.minItems;
      return s;
    }
    case 'map':
      return { type: 'object', additionalProperties: specSchema(spec.value) };
    case 'either':
      return { oneOf: [specSchema(spec.text), specSchema(spec.object)] };
    case 'object': {
      const properties: Record<string, JsonSchema> = {};
      for (const key of spec.extraKeys ?? []) properties[key] = { type: 'string' };
      for (const [key, field] of Object.entries(spec.fields)) properties[key] = fieldSchema(field);
      const required = Object.entries(spec.fields)
        .filter(([, f]) => f.required)
        .map(([k]) => k);
      const s: JsonSchema = { type: 'object', properties, additionalProperties: false };
      if (required.length > 0) s.required = required;
      if (spec.exactlyOneOf) s.oneOf = spec.exactlyOneOf.map((k) => ({ required: [k] }));
      return s;
    }
  }
}
