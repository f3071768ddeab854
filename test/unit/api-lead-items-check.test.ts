import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { plainLeadItems } from '../../src/api/lead-items-check.js';
import { leadRoutes, MAX_ITEMS } from '../../src/api/routes/leads.js';

// The leads POST's precheck (src/api/lead-items-check.ts) may only say yes to what the
// route's zod schema accepts unchanged; everything else goes on to the schema.

const schema = leadRoutes.find((r) => r.operationId === 'addLeads')!.body!;

// Mostly values the schema takes, with lengths around each limit, and now and then one it refuses.
const text = (max: number): fc.Arbitrary<string> => fc.oneof(fc.string({ maxLength: 12 }), fc.integer({ min: max - 1, max: max + 1 }).map((n) => 'x'.repeat(n)), fc.constant(''));
const odd = fc.oneof(fc.integer(), fc.constant(null), fc.double(), fc.constant([]), fc.constant({}));
const maybe = <T>(valid: fc.Arbitrary<T>): fc.Arbitrary<T | unknown> => fc.oneof({ weight: 8, arbitrary: valid }, { weight: 1, arbitrary: odd });
const scalar = fc.oneof(fc.string({ maxLength: 10 }), fc.integer(), fc.double(), fc.boolean(), odd);
const item = fc.record(
  {
    phone_number: maybe(text(64)),
    external_id: maybe(text(200)),
    variables: maybe(fc.dictionary(fc.oneof(text(200), fc.constant('__proto__')), scalar, { maxKeys: 3 })),
    secondary_phone_numbers: maybe(fc.oneof(fc.array(maybe(text(64)), { maxLength: 3 }), fc.integer({ min: 19, max: 21 }).map((n) => Array.from({ length: n }, () => '+12025550100')))),
    timezone: maybe(text(64)),
    country: maybe(text(8)),
    surprise: fc.jsonValue({ maxDepth: 1 }),
  },
  { requiredKeys: [] },
).map((i) => (Math.abs(JSON.stringify(i).length % 7) === 0 ? i : { ...i, surprise: undefined }));
// Through JSON, as the daemon reads a body (an own "__proto__" key included).
const body = fc.oneof(item, fc.array(item, { maxLength: 5 }), fc.jsonValue({ maxDepth: 3 })).map((v) => JSON.parse(JSON.stringify(v)) as unknown);

describe('the leads POST precheck', () => {
  it('accepts only bodies the schema accepts, and as the schema returns them', () => {
    fc.assert(
      fc.property(body, (value) => {
        if (!plainLeadItems(value, MAX_ITEMS)) return;
        const parsed = schema.safeParse(value);
        expect(parsed.success).toBe(true);
        expect(parsed.data).toEqual(value);
      }),
      { numRuns: 3000 },
    );
  });

  it('takes the bodies clients send, and leaves the limits to the schema', () => {
    const items = Array.from({ length: MAX_ITEMS }, (_, i) => ({ phone_number: `+1202555${String(i).padStart(4, '0')}`, external_id: `crm-${i}`, variables: { first_name: `A${i}`, n: i, vip: true }, secondary_phone_numbers: ['+12025550100'], timezone: 'America/New_York', country: 'US' }));
    expect(plainLeadItems(items, MAX_ITEMS)).toBe(true);
    expect(plainLeadItems(items[0], MAX_ITEMS)).toBe(true);
    expect(plainLeadItems([...items, items[0]], MAX_ITEMS)).toBe(false);
    expect(plainLeadItems([], MAX_ITEMS)).toBe(false);
    expect(plainLeadItems([{ phone_number: '+12025550100', extra: 1 }], MAX_ITEMS)).toBe(false);
    expect(plainLeadItems([{ phone_number: '+12025550100', external_id: '' }], MAX_ITEMS)).toBe(false);
    expect(plainLeadItems(JSON.parse('[{"phone_number":"+12025550100","variables":{"x":1e999}}]'), MAX_ITEMS)).toBe(false);
    expect(plainLeadItems(JSON.parse('[{"phone_number":"+12025550100","__proto__":{}}]'), MAX_ITEMS)).toBe(false);
  });

  it('says no to a deeply nested body without walking it (it runs before the depth check)', () => {
    // 100,000 levels: a walk by recursion would overflow the stack here.
    let deep: unknown = '+12025550100';
    for (let i = 0; i < 100_000; i++) deep = i % 2 ? [deep] : { phone_number: deep };
    expect(plainLeadItems(deep, MAX_ITEMS)).toBe(false);
    expect(plainLeadItems([deep], MAX_ITEMS)).toBe(false);
    expect(plainLeadItems({ phone_number: '+12025550100', variables: { a: deep } }, MAX_ITEMS)).toBe(false);
    expect(plainLeadItems({ phone_number: '+12025550100', secondary_phone_numbers: [deep] }, MAX_ITEMS)).toBe(false);
  });
});
