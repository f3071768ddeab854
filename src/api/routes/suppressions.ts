import { z } from 'zod';
import { addSuppressions, FILE_SOURCE, removeSuppressions, suppressedAmong, suppressionOf, suppressionPage, suppressLeadsOfNumbers } from '../../store/suppressions.js';
import { apiNumberReader, COUNTRY_PATTERN, pathNumber } from '../phone.js';
import { ApiProblem } from '../problem.js';
import { defineRoute, type Route } from '../route.js';
import { requestSchema, responseSchema } from '../schemas.js';

// The suppression (do-not-call) list, as `campaignd suppress` manages it: numbers read
// like the command reads them, adding one suppresses the waiting leads with it at once,
// and a number that came from suppression_file can be removed, but the file brings it
// back at the next reload unless it is taken out of the file too (the answer says so).

const MAX_NUMBERS = 10_000;
const PAGE_DEFAULT = 1000;

const Suppression = responseSchema(
  'Suppression',
  z.object({
    phone_number: z.string().meta({ description: 'E.164.' }),
    source: z.string().meta({ description: 'What listed it: api, cli, file (suppression_file), opt-out:CAMPAIGN.' }),
    added_at: z.string(),
  }),
);
const SuppressionPage = responseSchema(
  'SuppressionPage',
  z.object({
    numbers: z.array(Suppression),
    next_after: z.string().nullable().meta({ description: 'Pass as `after` for the next page; null on the last page.' }),
  }),
);
const Country = z.string().regex(COUNTRY_PATTERN, 'a two-letter country code, e.g. US').optional().meta({ description: "Read national numbers in this country (default: the campaigns' default_country)." });
const NewSuppressions = requestSchema(
  'NewSuppressions',
  z
    .strictObject({
      phone_number: z.string().max(64).optional().meta({ description: 'One number.' }),
      phone_numbers: z.array(z.string().max(64)).min(1).max(MAX_NUMBERS).optional().meta({ description: `Several numbers (up to ${MAX_NUMBERS}).` }),
      country: Country,
    })
    .refine((b) => (b.phone_number === undefined) !== (b.phone_numbers === undefined), { message: 'send either phone_number or phone_numbers' }),
);
const AddedItem = z.object({
  input: z.string(),
  outcome: z.enum(['added', 'already_listed', 'invalid']),
  phone_number: z.string().optional().meta({ description: 'E.164, when the number could be read.' }),
  reason: z.string().optional().meta({ description: 'Why the number could not be read.' }),
});
const SuppressionsAdded = responseSchema(
  'SuppressionsAdded',
  z.object({
    added: z.number().int(),
    already_listed: z.number().int(),
    invalid: z.number().int(),
    leads_suppressed: z.number().int().meta({ description: 'Waiting leads with one of the numbers, now suppressed (no further calls).' }),
    items: z.array(AddedItem).meta({ description: 'One per number sent, in order.' }),
  }),
);
const SuppressionRemoved = responseSchema(
  'SuppressionRemoved',
  z.object({
    phone_number: z.string(),
    source: z.string(),
    from_suppression_file: z.boolean().meta({ description: 'True: the number is in suppression_file and returns at the next reload unless it is removed from that file too.' }),
    note: z.string().nullable(),
  }),
);
const NumberParams = z.object({ phone_number: z.string().min(1).max(64).meta({ description: 'E.164, or national in `country`.' }) });
const CountryQuery = z.object({ country: Country });
const ListQuery = z.object({
  after: z.string().max(64).optional().meta({ description: '`next_after` of the previous page.' }),
  limit: z.coerce.number().int().min(1).max(10_000).optional().meta({ description: `Numbers per page (default ${PAGE_DEFAULT}).` }),
});

const iso = (ms: number): string => new Date(ms).toISOString();
const shown = (r: { phone_number: string; source: string; added_at: number }) => ({ phone_number: r.phone_number, source: r.source, added_at: iso(r.added_at) });

const list = defineRoute<undefined, z.infer<typeof ListQuery>>({
  method: 'GET',
  path: '/suppressions',
  operationId: 'listSuppressions',
  summary: 'The suppression list, a page at a time (in number order)',
  tag: 'suppressions',
  scope: 'read',
  query: ListQuery,
  responses: { 200: { description: 'A page of listed numbers.', schema: SuppressionPage } },
  handle: async ({ query, deps }) => {
    const limit = query.limit ?? PAGE_DEFAULT;
    const rows = await suppressionPage(deps.db, query.after ?? '', limit);
    return { status: 200, body: { numbers: rows.map(shown), next_after: rows.length === limit ? rows.at(-1)!.phone_number : null } };
  },
});

const get = defineRoute<{ phone_number: string }, z.infer<typeof CountryQuery>>({
  method: 'GET',
  path: '/suppressions/{phone_number}',
  operationId: 'getSuppression',
  summary: 'Whether a number is listed, and by what',
  tag: 'suppressions',
  scope: 'read',
  params: NumberParams,
  query: CountryQuery,
  responses: { 200: { description: 'The number is listed.', schema: Suppression } },
  handle: async ({ params, query, deps }) => {
    const phone = await pathNumber(deps.db, params.phone_number, query.country?.toUpperCase());
    const row = await suppressionOf(deps.db, phone);
    if (!row) throw new ApiProblem(404, 'Not found', `${phone} is not on the suppression list`);
    return { status: 200, body: shown(row) };
  },
});

const add = defineRoute<undefined, undefined, z.infer<typeof NewSuppressions>>({
  method: 'POST',
  path: '/suppressions',
  operationId: 'addSuppressions',
  summary: 'List one number or many: they are never dialled again',
  description:
    'Numbers are read like `campaignd suppress add` reads them. Waiting leads (pending or retry scheduled) with a listed number become `suppressed` at once; ' +
    'a call already live finishes. Numbers that cannot be read are answered per item with the reason; the others are still listed. 422 when none can be read.',
  tag: 'suppressions',
  scope: 'write',
  body: NewSuppressions,
  responses: { 200: { description: 'What happened to each number.', schema: SuppressionsAdded } },
  handle: async ({ body, keyName, deps }) => {
    const read = await apiNumberReader(deps.db, body.country?.toUpperCase());
    const inputs = body.phone_numbers ?? [body.phone_number!];
    const readings = inputs.map((input) => ({ input, r: read(input) }));
    const numbers = [...new Set(readings.flatMap((x) => (x.r.ok ? [x.r.e164] : [])))];
    if (numbers.length === 0) {
      const errors = readings.slice(0, 100).map((x, i) => ({ pointer: body.phone_numbers ? `/phone_numbers/${i}` : '/phone_number', message: x.r.ok ? '' : x.r.reason }));
      throw new ApiProblem(422, 'Invalid phone number', `no number could be read: ${errors[0]!.message}`, errors);
    }
    const listed = await suppressedAmong(deps.db, numbers);
    const now = deps.clock.now();
    const added = await addSuppressions(deps.db, numbers, keyName ? `api:${keyName}` : 'api', now);
    const leads = await suppressLeadsOfNumbers(deps.db, numbers, now);
    const seen = new Set<string>();
    const items = readings.map(({ input, r }) => {
      if (!r.ok) return { input, outcome: 'invalid' as const, reason: r.reason };
      const first = !seen.has(r.e164);
      seen.add(r.e164);
      return { input, phone_number: r.e164, outcome: first && !listed.has(r.e164) ? ('added' as const) : ('already_listed' as const) };
    });
    deps.logger.info({ added, leads_suppressed: leads }, 'suppression list: numbers added through the API');
    return {
      status: 200,
      body: { added, already_listed: numbers.length - added, invalid: items.filter((i) => i.outcome === 'invalid').length, leads_suppressed: leads, items },
    };
  },
});

const remove = defineRoute<{ phone_number: string }, z.infer<typeof CountryQuery>>({
  method: 'DELETE',
  path: '/suppressions/{phone_number}',
  operationId: 'removeSuppression',
  summary: 'Take a number off the list',
  description:
    'Like `campaignd suppress remove`: leads already suppressed stay so (re-import them on purpose). A number that came from suppression_file is removed too, ' +
    'but the file lists it again at the next reload unless it is removed from the file: the answer says so.',
  tag: 'suppressions',
  scope: 'write',
  params: NumberParams,
  query: CountryQuery,
  responses: { 200: { description: 'The number was removed.', schema: SuppressionRemoved } },
  handle: async ({ params, query, deps }) => {
    const phone = await pathNumber(deps.db, params.phone_number, query.country?.toUpperCase());
    const [row] = await removeSuppressions(deps.db, [phone]);
    if (!row) throw new ApiProblem(404, 'Not found', `${phone} is not on the suppression list`);
    const fromFile = row.source === FILE_SOURCE;
    deps.logger.info({ source: row.source }, 'suppression list: a number removed through the API');
    return {
      status: 200,
      body: { phone_number: phone, source: row.source, from_suppression_file: fromFile, note: fromFile ? `${phone} came from suppression_file and returns at the next reload unless it is removed from that file` : null },
    };
  },
});

export const suppressionRoutes: Route[] = [list, get, add, remove];
