import fs from 'node:fs';
import readline from 'node:readline';
import { normalisePhone } from './phone.js';

// The do-not-call file: what it holds, read and normalised. Making the table match it is
// the store's part (store/suppressions.ts).

/** A line of the suppression file that is not a usable number. */
export interface SuppressionProblem {
  line: number;
  text: string;
  reason: string;
}

/** Reads a do-not-call file: one E.164 number a line; `#` starts a comment; blank lines ignored. */
export async function readSuppressionFile(file: string): Promise<{ numbers: string[]; problems: SuppressionProblem[] }> {
  const numbers = new Set<string>();
  const problems: SuppressionProblem[] = [];
  const input = fs.createReadStream(file, { encoding: 'utf8' });
  const lines = readline.createInterface({ input, crlfDelay: Infinity });
  let line = 0;
  try {
    for await (const raw of lines) {
      line++;
      const text = (line === 1 ? raw.replace(/^\uFEFF/, '') : raw).split('#', 1)[0]?.trim() ?? '';
      if (text === '') continue;
      // No default country: a national number on a shared list is ambiguous.
      const result = normalisePhone(text);
      if (result.ok) numbers.add(result.e164);
      else problems.push({ line, text, reason: result.reason });
    }
  } finally {
    lines.close();
    input.destroy();
  }
  return { numbers: [...numbers], problems };
}
