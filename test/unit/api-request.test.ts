import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { ApiProblem } from '../../src/api/problem.js';
import { MAX_JSON_DEPTH, nestedDeeperThan, validate } from '../../src/api/request.js';

describe('API request checks', () => {
  it('measures nesting without recursion, even a million levels deep', () => {
    expect(nestedDeeperThan({ a: [1, { b: 2 }] }, 3)).toBe(false);
    expect(nestedDeeperThan({ a: [1, { b: {} }] }, 3)).toBe(true);
    const deep = JSON.parse('['.repeat(1_000_000) + ']'.repeat(1_000_000)) as unknown;
    expect(nestedDeeperThan(deep, MAX_JSON_DEPTH)).toBe(true);
  });

  it('names every wrong field by a JSON pointer, an unknown field at the field itself', () => {
    const schema = z.strictObject({ phone_number: z.string(), variables: z.record(z.string(), z.string()).optional() });
    let problem: ApiProblem | undefined;
    try {
      validate(schema, { phone_number: 5, variables: { 'a/b': 1 }, extra: true }, 422, 'Invalid body', '');
    } catch (err) {
      problem = err as ApiProblem;
    }
    expect(problem).toBeInstanceOf(ApiProblem);
    expect(problem!.status).toBe(422);
    const pointers = problem!.errors!.map((e) => e.pointer).sort();
    expect(pointers).toEqual(['/extra', '/phone_number', '/variables/a~1b']);
    expect(problem!.document()).toMatchObject({ type: 'urn:campaignd:problem:invalid-body', title: 'Invalid body', status: 422 });
    expect(problem!.detail).toMatch(/and 2 more/);
  });
});
