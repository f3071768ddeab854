import type { ReadLeadResult } from '../../src/leads/read-leads.js';

/** Numbers as the rows a lead file reader yields (line 2 onwards, no variables), for importLeads. */
export async function* phoneRows(phones: readonly string[]): AsyncGenerator<ReadLeadResult> {
  for (const [i, phone] of phones.entries()) yield { ok: true, line: i + 2, lead: { phoneNumber: phone, secondary: [], variables: {} } };
}
