// Generated requests against every write route of the API (fast-check): whatever a client
// sends — broken JSON, wrong types, unknown fields, odd path segments, huge or empty
// values — the daemon answers with a documented status below 500, and a refused request
// leaves every stored lead exactly as it was. The routes come from the route table, so a
// route added later is fuzzed without touching this file.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiRoutes } from '../../src/api/routes/index.js';
import { fetchOpenApi, ResponseChecker } from '../helpers/api.js';
import { phoneNumbers, startStack, type Stack } from '../helpers/stack.js';

let stack: Stack;
let checker: ResponseChecker;

beforeAll(async () => {
  stack = await startStack({
    campaigns: [{ name: 'spring', leads: phoneNumbers(5).map((phone) => ({ phone })) }],
    // The engine stays off: only the requests change the store.
    startEngine: false,
    api: true,
  });
  checker = new ResponseChecker(await fetchOpenApi(stack.httpUrl));
});
afterAll(async () => stack?.close());

/** Every column of every lead, in id order: what a refused request must not change. */
async function leadsSnapshot(): Promise<string> {
  const rows = await stack.db.selectFrom('leads').selectAll().orderBy('id').execute();
  const contacts = await stack.db.selectFrom('lead_contacts').selectAll().orderBy('lead_id').orderBy('position').execute();
  return JSON.stringify({ rows, contacts });
}

const validPhone = fc.constantFrom(...phoneNumbers(20, 100));
const scalar = fc.oneof(fc.string({ maxLength: 20 }), fc.integer(), fc.double(), fc.boolean(), fc.constant(null));
const leadItem = fc.record(
  {
    phone_number: fc.oneof(validPhone, fc.string({ maxLength: 30 }), fc.integer(), fc.constant('+1 (202) 555-01x')),
    external_id: fc.oneof(fc.string({ maxLength: 40 }), fc.integer()),
    variables: fc.oneof(fc.dictionary(fc.string({ maxLength: 12 }), scalar, { maxKeys: 5 }), fc.jsonValue({ maxDepth: 3 })),
    secondary_phone_numbers: fc.oneof(fc.array(fc.oneof(validPhone, fc.string({ maxLength: 15 })), { maxLength: 3 }), fc.string()),
    timezone: fc.oneof(fc.constantFrom('Europe/Berlin', 'America/New_York', 'Mars/Olympus'), fc.string({ maxLength: 10 })),
    country: fc.oneof(fc.constantFrom('US', 'DE', 'XX'), fc.string({ maxLength: 4 })),
    surprise: fc.jsonValue({ maxDepth: 2 }),
  },
  { requiredKeys: [] },
);
const jsonBody = fc.oneof(
  leadItem,
  fc.array(leadItem, { maxLength: 8 }),
  fc.jsonValue({ maxDepth: 4 }),
  fc.record({ phone_number: validPhone }),
  fc.record({ phone_numbers: fc.array(fc.oneof(validPhone, fc.string()), { maxLength: 4 }) }),
);
const body = fc.oneof(
  { weight: 6, arbitrary: jsonBody.map((v) => ({ text: JSON.stringify(v) ?? 'null', type: 'application/json' })) },
  { weight: 1, arbitrary: fc.string({ maxLength: 60 }).map((text) => ({ text, type: 'application/json' })) },
  { weight: 1, arbitrary: jsonBody.map((v) => ({ text: JSON.stringify(v) ?? 'null', type: 'text/plain' })) },
  { weight: 1, arbitrary: fc.constant({ text: `${'['.repeat(5000)}${']'.repeat(5000)}`, type: 'application/json' }) },
);

/**
 * A value for a path parameter, by its name: mostly plausible, sometimes not. Never "." or
 * "..": a URL parser removes those dot segments (encoded or not), so the request would reach
 * another route than the one under test; no campaign may have such a name.
 */
function paramValue(name: string): fc.Arbitrary<string> {
  const odd = fc
    .oneof(fc.string({ minLength: 1, maxLength: 30 }), fc.constantFrom('%', '...', '0', '-1', '9999999999999999999', 'a'.repeat(300)))
    .filter((v) => v !== '.' && v !== '..');
  if (name === 'name') return fc.oneof(fc.constant('spring'), fc.constant('winter'), odd);
  if (name === 'id') return fc.oneof(fc.integer({ min: 1, max: 8 }).map(String), odd);
  if (name.includes('phone')) return fc.oneof(validPhone, fc.constant(phoneNumbers(1)[0]!), odd);
  return odd;
}

const writeRoutes = apiRoutes.filter((r) => r.scope === 'write');

describe('API: generated requests to every write route', () => {
  it('has write routes to fuzz', () => {
    expect(writeRoutes.length).toBeGreaterThan(0);
  });

  for (const route of writeRoutes) {
    it(`${route.method} ${route.path}: never a 5xx, and a refused request changes no lead`, async () => {
      const names = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
      const params = fc.tuple(...names.map(paramValue));
      await fc.assert(
        fc.asyncProperty(params, body, fc.option(fc.string({ maxLength: 20 }), { nil: undefined }), async (values, sent, idempotencyKey) => {
          let path = route.path;
          names.forEach((name, i) => {
            path = path.replace(`{${name}}`, encodeURIComponent(values[i]!));
          });
          const before = await leadsSnapshot();
          const res = await fetch(`${stack.httpUrl}/api/v1${path}`, {
            method: route.method,
            headers: { 'content-type': sent.type, ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}) },
            ...(route.method === 'GET' ? {} : { body: sent.text }),
          });
          const text = await res.text();
          expect(res.status, text).toBeLessThan(500);
          const type = res.headers.get('content-type') ?? '';
          checker.check(route.method, `/api/v1${route.path}`, res.status, type, text === '' ? undefined : JSON.parse(text));
          if (res.status >= 400) expect(await leadsSnapshot(), `${route.method} ${path} → ${res.status} ${text.slice(0, 200)}`).toBe(before);
        }),
        { numRuns: 60 },
      );
      // The daemon still answers.
      expect((await fetch(`${stack.httpUrl}/api/v1/campaigns`)).status).toBe(200);
    });
  }
});
