// The GET routes on SQLite read on a read-only connection of their own: a lookup must not
// wait for a transaction held open on the one writing connection (the dial loop's group
// commit, a lead POST), which kysely serialises every statement behind.
import { afterEach, describe, expect, it } from 'vitest';
import { apiClient, fetchOpenApi, ResponseChecker } from '../helpers/api.js';
import { startStack, type Stack } from '../helpers/stack.js';

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

describe('API: reads beside a held write transaction (SQLite)', () => {
  it('answers GET /leads/{id} and a lookup while a transaction holds the writing connection', async () => {
    stack = await startStack({
      campaigns: [{ name: 'spring', leads: [{ phone: '+12025550999' }], settings: { defaultCountry: 'US' } }],
      startEngine: false,
      api: { readOnlyConnection: true },
    });
    const api = apiClient(stack.httpUrl, new ResponseChecker(await fetchOpenApi(stack.httpUrl)));
    const lead = await stack.db.selectFrom('leads').select('id').executeTakeFirstOrThrow();

    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let holding!: () => void;
    const started = new Promise<void>((resolve) => (holding = resolve));
    const writer = stack.db.transaction().execute(async (trx) => {
      await trx.updateTable('campaigns').set({ name: 'spring' }).where('name', '=', 'spring').execute();
      holding();
      await held;
    });
    await started;
    try {
      const one = await api.GET('/api/v1/leads/{id}', { params: { path: { id: Number(lead.id) } } });
      expect(one.response.status).toBe(200);
      const found = await api.GET('/api/v1/campaigns/{name}/leads', { params: { path: { name: 'spring' }, query: { phone_number: '+12025550999' } } });
      expect(found.data!.leads.map((l) => l.id)).toEqual([Number(lead.id)]);
    } finally {
      release();
      await writer;
    }
  });
});
