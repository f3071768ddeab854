import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CsvParser, parseCsv, type CsvRecord } from '../../src/leads/csv.js';

const fields = (records: CsvRecord[]): string[][] => records.map((r) => r.fields);

describe('CSV parser', () => {
  it('reads a header and rows, with or without a final newline', () => {
    expect(fields(parseCsv('a,b\n1,2\n3,4\n'))).toEqual([['a', 'b'], ['1', '2'], ['3', '4']]);
    expect(fields(parseCsv('a,b\n1,2'))).toEqual([['a', 'b'], ['1', '2']]);
  });

  it('drops a byte-order mark at the start only', () => {
    expect(fields(parseCsv('\uFEFFphone_number,x\n+1,\uFEFFy\n'))).toEqual([['phone_number', 'x'], ['+1', '\uFEFFy']]);
  });

  it('treats CRLF, LF and a lone CR as line ends and counts physical lines', () => {
    const records = parseCsv('a\r\n1\r\n2\n3\r4\r\n');
    expect(fields(records)).toEqual([['a'], ['1'], ['2'], ['3'], ['4']]);
    expect(records.map((r) => r.line)).toEqual([1, 2, 3, 4, 5]);
  });

  it('keeps commas, doubled quotes and newlines inside quoted fields', () => {
    const records = parseCsv('name,note\n"Doe, Jane","said ""hi""\nthen left"\nnext,row\n');
    expect(fields(records)).toEqual([['name', 'note'], ['Doe, Jane', 'said "hi"\nthen left'], ['next', 'row']]);
    // The quoted newline is a physical line: the next record starts on line 4.
    expect(records.map((r) => r.line)).toEqual([1, 2, 4]);
  });

  it('counts a CRLF inside quotes as one line', () => {
    const records = parseCsv('a\r\n"x\r\ny"\r\nz\r\n');
    expect(records.map((r) => [r.line, r.fields[0]])).toEqual([[1, 'a'], [2, 'x\r\ny'], [4, 'z']]);
  });

  it('skips blank lines and rows of empty fields, keeping line numbers right', () => {
    const records = parseCsv('a,b\n\n1,2\n,\n\r\n3,4\n\n');
    expect(records.map((r) => [r.line, ...r.fields])).toEqual([[1, 'a', 'b'], [3, '1', '2'], [6, '3', '4']]);
  });

  it('keeps empty fields and a quote in the middle of an unquoted field', () => {
    expect(fields(parseCsv('a,,c\n5" tall,x\n'))).toEqual([['a', '', 'c'], ['5" tall', 'x']]);
  });

  it('is lenient about text after a closing quote', () => {
    expect(fields(parseCsv('"ab"cd,e\n'))).toEqual([['abcd', 'e']]);
  });

  it('flags a quoted field that never closes', () => {
    const records = parseCsv('a\n"never closed\nmore\n');
    expect(records[1]).toMatchObject({ line: 2, unterminated: true });
  });

  it('gives the same records however the text is split into chunks', () => {
    const cell = fc.oneof(fc.constantFrom('', 'x', 'a,b', 'say ""hi""', 'line\nbreak', 'cr\r\nlf', ' +49 30 '), fc.string({ maxLength: 5 }));
    const row = fc.array(cell, { minLength: 1, maxLength: 4 });
    const quote = (c: string): string => (/[",\r\n]/.test(c) || c === '' ? `"${c.replace(/"/g, '""')}"` : c);
    fc.assert(
      fc.property(fc.array(row, { minLength: 1, maxLength: 6 }), fc.constantFrom('\n', '\r\n'), fc.boolean(), fc.array(fc.nat(), { maxLength: 8 }), (rows, eol, bom, cuts) => {
        const text = (bom ? '\uFEFF' : '') + rows.map((r) => r.map(quote).join(',')).join(eol) + eol;
        const whole = parseCsv(text);
        const parser = new CsvParser();
        const out: CsvRecord[] = [];
        const points = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
        let from = 0;
        for (const p of [...points, text.length]) {
          parser.push(text.slice(from, p), out);
          from = p;
        }
        parser.end(out);
        expect(out).toEqual(whole);
        // Every row that is not all-empty comes back exactly.
        const expected = rows.map((r) => r.map((c) => c)).filter((r) => r.some((c) => c !== ''));
        expect(fields(whole)).toEqual(expected);
      }),
      { numRuns: 300 },
    );
  });
});
