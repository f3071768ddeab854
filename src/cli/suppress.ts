// `campaignd suppress add|remove|list|import`: the do-not-call list kept in the store
// (docs/design.md §11). Numbers are normalised to E.164 as lead numbers are; the
// running daemon sees a change at its next claim (it checks the store before each call).
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { normalisePhone } from '../leads/phone.js';
import { addSuppressions, listSuppressions, removeSuppressions, suppressLeadsOfNumbers } from '../store/suppressions.js';
import { formatLocal } from '../time/duration-format.js';
import { systemClock } from '../time/clock.js';
import { CliError, EXIT, type CliIo } from './io.js';
import { parseCommandArgs } from './args.js';
import { openReadStore, openWriteStore } from './open-store.js';
import { commandNumberReader, type NumberReader } from '../leads/typed-number.js';

export const SUPPRESS_HELP = `Usage: campaignd suppress add NUMBER... | remove NUMBER... | list | import FILE
                          [--country CC] [--config FILE] [--json]

The suppression (do-not-call) list in the store, over all campaigns. A listed number is
never dialled: waiting leads with it become "suppressed" at once (their retries are
cancelled); the running daemon checks the list before every call.

  add NUMBER...   list numbers (source "cli")
  remove NUMBER... take numbers off the list (a number from suppression_file comes back at
                  the next reload unless it is removed from that file too); leads already
                  suppressed stay so: re-import them on purpose
  list            every listed number, with where it came from (cli, file, opt-out:CAMPAIGN)
  import FILE     a CSV of numbers: one a line, or a phone_number/phone/number column under a
                  header; lines that are not numbers are reported with their line numbers

  --country CC    read national-format numbers in this country (e.g. US); without it, in
                  the default_country of the campaigns (a number that reads differently
                  in theirs is refused with the --country to pass)
  --json          one JSON document on stdout

A number that cannot be read is reported on its own line with the reason, and the others
are still added (or removed); the exit status is then 1.
`;

/** `campaignd suppress …`. */
export async function suppressCommand(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandArgs(
    { args, allowPositionals: true, options: { config: { type: 'string' }, json: { type: 'boolean' }, country: { type: 'string' }, help: { type: 'boolean', short: 'h' } } },
    SUPPRESS_HELP,
  );
  if (values.help) {
    io.stdout.write(SUPPRESS_HELP);
    return EXIT.ok;
  }
  const [action, ...rest] = positionals;
  switch (action) {
    case 'list':
      if (rest.length > 0) throw new CliError('list takes no arguments (see --help)', EXIT.usage);
      return list(values.config, values.json === true, io);
    case 'add':
    case 'remove': {
      if (rest.length === 0) throw new CliError(`expected: suppress ${action} NUMBER... (see --help)`, EXIT.usage);
      // Each number on its own: the good ones are listed (or taken off), the bad ones reported.
      const readArgs = (read: NumberReader): NumberList => {
        const numbers = new Set<string>();
        const problems: ListProblem[] = [];
        for (const raw of rest) {
          const r = read(raw);
          if (r.ok) numbers.add(r.e164);
          else problems.push({ text: raw, reason: r.reason });
        }
        return { numbers: [...numbers], problems };
      };
      return action === 'add' ? add(values.config, values.country, readArgs, 'cli', values.json === true, io) : remove(values.config, values.country, readArgs, values.json === true, io);
    }
    case 'import': {
      if (rest.length !== 1) throw new CliError('expected: suppress import FILE (see --help)', EXIT.usage);
      const file = path.resolve(io.cwd, rest[0]!);
      let text: string;
      try {
        text = await readFile(file, 'utf8');
      } catch (err) {
        throw new CliError(`cannot read ${file}: ${(err as { code?: string }).code === 'ENOENT' ? 'no such file' : String(err)}`, EXIT.usage);
      }
      const readFileList = (read: NumberReader): NumberList => {
        const list = readNumberList(text, read);
        return { numbers: list.numbers, problems: list.problems.map((p) => ({ ...p, file })) };
      };
      return add(values.config, values.country, readFileList, 'cli', values.json === true, io);
    }
    default:
      throw new CliError('expected: suppress add|remove|list|import (see --help)', EXIT.usage);
  }
}

/** A number that could not be read: a command-line argument, or a line of a file. */
export interface ListProblem {
  text: string;
  reason: string;
  file?: string;
  line?: number;
}

interface NumberList {
  numbers: string[];
  problems: ListProblem[];
}

/**
 * Numbers of a CSV or plain list: the phone column under a header (phone_number, phone,
 * number, or the first column), else the first field of every line. Blank lines and
 * `#` comments are skipped; other lines that are not numbers become problems.
 */
export function readNumberList(text: string, read: NumberReader = (cell) => normalisePhone(cell)): { numbers: string[]; problems: (ListProblem & { line: number })[] } {
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  const first = lines.find((l) => l.trim() !== '' && !l.trim().startsWith('#')) ?? '';
  const delimiter = [',', ';', '\t', '|'].find((d) => first.includes(d));
  const split = (l: string): string[] => (delimiter ? l.split(delimiter) : [l]).map((c) => c.trim().replace(/^"(.*)"$/, '$1'));
  let column = 0;
  let headerLine = -1;
  const firstCells = split(first);
  if (/[a-z]/i.test(first) && !firstCells.some((c) => read(c).ok)) {
    headerLine = lines.indexOf(first);
    const names = firstCells.map((c) => c.toLowerCase());
    const found = ['phone_number', 'phone', 'number', 'phone number', 'e164'].map((n) => names.indexOf(n)).find((i) => i >= 0);
    column = found ?? 0;
  }
  const numbers = new Set<string>();
  const problems: (ListProblem & { line: number })[] = [];
  for (const [i, raw] of lines.entries()) {
    if (i === headerLine) continue;
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const cell = split(raw)[column] ?? '';
    const r = read(cell);
    if (r.ok) numbers.add(r.e164);
    else problems.push({ line: i + 1, text: cell.length > 40 ? `${cell.slice(0, 37)}...` : cell, reason: r.reason });
  }
  return { numbers: [...numbers], problems };
}

/** One line for each number that could not be read (the first 50), on stderr. */
function reportProblems(problems: readonly ListProblem[], io: CliIo): void {
  for (const p of problems.slice(0, 50)) {
    io.stderr.write(`${p.file ? `${p.file}:${p.line}: ` : ''}"${p.text}" is not a phone number campaignd can read: ${p.reason}\n`);
  }
  if (problems.length > 50) io.stderr.write(`… and ${problems.length - 50} more numbers that could not be read\n`);
}

async function add(configFlag: string | undefined, country: string | undefined, input: (read: NumberReader) => NumberList, source: string, json: boolean, io: CliIo): Promise<number> {
  const store = await openWriteStore(configFlag, io);
  try {
    const { numbers, problems } = input(await commandNumberReader(store.db, country));
    const now = systemClock.now();
    const added = numbers.length > 0 ? await addSuppressions(store.db, numbers, source, now) : 0;
    const leads = numbers.length > 0 ? await suppressLeadsOfNumbers(store.db, numbers, now) : 0;
    if (json) io.stdout.write(`${JSON.stringify({ read: numbers.length, added, already_listed: numbers.length - added, leads_suppressed: leads, invalid: problems }, null, 2)}\n`);
    else {
      reportProblems(problems, io);
      const skipped = problems.length ? `, ${problems.length} ${problems[0]?.file ? 'invalid line' : 'invalid number'}${problems.length === 1 ? '' : 's'} skipped` : '';
      io.stdout.write(`suppression list: ${added} added, ${numbers.length - added} already listed${skipped}; ${leads} waiting lead${leads === 1 ? '' : 's'} suppressed\n`);
    }
    return problems.length > 0 ? EXIT.problems : EXIT.ok;
  } finally {
    await store.close();
  }
}

async function remove(configFlag: string | undefined, country: string | undefined, input: (read: NumberReader) => NumberList, json: boolean, io: CliIo): Promise<number> {
  const store = await openWriteStore(configFlag, io);
  try {
    const { numbers, problems } = input(await commandNumberReader(store.db, country));
    const removed = numbers.length > 0 ? await removeSuppressions(store.db, numbers) : [];
    const fromFile = removed.filter((r) => r.source === 'file').map((r) => r.phone_number);
    if (json) {
      const notListed = numbers.filter((n) => !removed.some((r) => r.phone_number === n));
      io.stdout.write(`${JSON.stringify({ removed: removed.map((r) => r.phone_number), not_listed: notListed, from_suppression_file: fromFile, invalid: problems }, null, 2)}\n`);
    } else {
      reportProblems(problems, io);
      const skipped = problems.length ? `, ${problems.length} invalid number${problems.length === 1 ? '' : 's'} skipped` : '';
      io.stdout.write(`suppression list: ${removed.length} removed, ${numbers.length - removed.length} were not listed${skipped}\n`);
      if (fromFile.length > 0) io.stderr.write(`note: ${fromFile.join(', ')} came from suppression_file and return at the next reload unless removed from that file\n`);
    }
    return problems.length > 0 ? EXIT.problems : EXIT.ok;
  } finally {
    await store.close();
  }
}

async function list(configFlag: string | undefined, json: boolean, io: CliIo): Promise<number> {
  const store = await openReadStore(configFlag, io);
  try {
    const rows = await listSuppressions(store.db);
    if (json) io.stdout.write(`${JSON.stringify({ numbers: rows.map((r) => ({ phone_number: r.phone_number, source: r.source, added_at: new Date(r.added_at).toISOString() })) }, null, 2)}\n`);
    else {
      for (const r of rows) io.stdout.write(`${r.phone_number}\t${r.source}\t${formatLocal(r.added_at, 'UTC')}\n`);
      io.stdout.write(`${rows.length} number${rows.length === 1 ? '' : 's'} on the suppression list\n`);
    }
    return EXIT.ok;
  } finally {
    await store.close();
  }
}
