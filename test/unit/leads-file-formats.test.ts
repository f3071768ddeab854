// Lead files as people have them (issue 16): every fixture is written here, in the
// encoding, delimiter or workbook form a spreadsheet or CRM produces.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, describe, expect, it } from 'vitest';
import { listSheets } from '../../src/leads/xlsx.js';
import { LeadFileError, readLeadFile, type LeadFileLayout, type ReadLeadOptions, type ReadLeadResult } from '../../src/leads/read-leads.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'campaignd-lead-formats-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

let n = 0;
function write(name: string, data: Buffer | string): string {
  const file = path.join(dir, `${n++}-${name}`);
  fs.writeFileSync(file, data);
  return file;
}

async function read(file: string, opts: ReadLeadOptions = {}): Promise<{ rows: ReadLeadResult[]; layout?: LeadFileLayout }> {
  let layout: LeadFileLayout | undefined;
  const rows: ReadLeadResult[] = [];
  for await (const r of readLeadFile(file, { defaultCountry: 'DE', ...opts, onLayout: (l) => (layout = l) })) rows.push(r);
  return layout ? { rows, layout } : { rows };
}

const utf16be = (text: string): Buffer => {
  const le = Buffer.from(text, 'utf16le');
  for (let i = 0; i < le.length; i += 2) [le[i], le[i + 1]] = [le[i + 1]!, le[i]!];
  return le;
};

const phones = (rows: ReadLeadResult[]): unknown[] => rows.map((r) => (r.ok ? [r.line, r.lead.phoneNumber] : [r.line, r.reason]));

describe('delimited lead files', () => {
  it('reads a ";"-separated Excel export with a "Phone" header, and says how', async () => {
    const file = write('semicolon.csv', 'Phone;Vorname;Nachname\r\n030 1234567;Ada;"Lovelace; Countess"\r\n+15555550100;Ben;X\r\n');
    const { rows, layout } = await read(file);
    expect(phones(rows)).toEqual([
      [2, '+49301234567'],
      [3, '+15555550100'],
    ]);
    expect(rows[0]).toMatchObject({ lead: { variables: { Vorname: 'Ada', Nachname: 'Lovelace; Countess' } } });
    expect(layout).toEqual({
      format: { type: 'csv', encoding: 'utf-8', delimiter: ';', bom: false },
      columns: { phone_number: { column: 'Phone', how: 'recognised' }, secondary_phone_numbers: [], variables: { Vorname: 'Vorname', Nachname: 'Nachname' } },
    });
  });

  it("reads Excel's Unicode text export: UTF-16 LE with BOM, tab-separated", async () => {
    const text = 'Telefon\tName\tZeitzone\r\n+4915100000001\tJürgen\tEurope/Berlin\r\n0151 00000002\tZoë\t\r\n';
    const file = write('unicode.txt', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]));
    const { rows, layout } = await read(file);
    expect(layout?.format).toEqual({ type: 'csv', encoding: 'utf-16le', delimiter: '\t', bom: true });
    expect(rows).toMatchObject([
      { ok: true, line: 2, lead: { phoneNumber: '+4915100000001', timezone: 'Europe/Berlin', variables: { Name: 'Jürgen' } } },
      { ok: true, line: 3, lead: { phoneNumber: '+4915100000002', variables: { Name: 'Zoë' } } },
    ]);
  });

  it('reads UTF-16 BE with BOM', async () => {
    const file = write('be.csv', Buffer.concat([Buffer.from([0xfe, 0xff]), utf16be('phone_number,name\n+15555550100,Émile\n')]));
    const { rows, layout } = await read(file);
    expect(layout?.format).toMatchObject({ encoding: 'utf-16be', delimiter: ',' });
    expect(rows).toMatchObject([{ ok: true, line: 2, lead: { phoneNumber: '+15555550100', variables: { name: 'Émile' } } }]);
  });

  it('reads Windows-1252 with umlauts, detected or named with --encoding', async () => {
    const file = write('ansi.csv', Buffer.from('Telefonnummer;Straße;Ort\n030 1234567;Müllerstraße 5;Köln\n', 'latin1'));
    const detected = await read(file);
    expect(detected.layout?.format).toMatchObject({ encoding: 'windows-1252', delimiter: ';' });
    expect(detected.rows).toMatchObject([{ ok: true, line: 2, lead: { phoneNumber: '+49301234567', variables: { Straße: 'Müllerstraße 5', Ort: 'Köln' } } }]);
    // Plain ASCII in the first 64 KB reads as UTF-8 unless told.
    const named = await read(file, { encoding: 'windows-1252' });
    expect(named.rows).toEqual(detected.rows);
  });

  it('reads a pipe-separated export, and --delimiter overrides detection', async () => {
    const file = write('pipe.csv', 'phone_number|name\n+15555550100|Ada, Countess\n');
    expect((await read(file)).rows).toMatchObject([{ ok: true, lead: { variables: { name: 'Ada, Countess' } } }]);
    // A header with more commas than pipes is taken for comma-separated unless told.
    const ambiguous = write('pipe2.csv', 'phone_number|name, first, middle\n+15555550100|Ada, B, C\n');
    await expect(read(ambiguous)).rejects.toThrow(/found: "phone_number\|name", "first", "middle"/);
    const forced = await read(ambiguous, { delimiter: '|' });
    expect(forced.layout?.format).toMatchObject({ delimiter: '|' });
    expect(forced.rows).toMatchObject([{ ok: true, lead: { variables: { 'name, first, middle': 'Ada, B, C' } } }]);
  });

  it('keeps physical line numbers across quoted line breaks (CRLF too), blank lines and an unterminated quote', async () => {
    const file = write('lines.csv', 'Phone;Note\r\n+15555550100;"two\r\nlines"\r\n\r\nabc;x\r\n+15555550101;"three\r\nlines\r\nhere"\r\n+15555550102;ok\r\n+15555550103;"never closed\r\n');
    const { rows } = await read(file);
    expect(phones(rows)).toEqual([
      [2, '+15555550100'],
      [5, 'not a phone number'],
      [6, '+15555550101'],
      [9, '+15555550102'],
      [10, 'unterminated quoted field (a " without its closing ")'],
    ]);
  });

  it('names the file and what to do when the phone column is ambiguous', async () => {
    const file = write('two-phones.csv', 'Name;Phone;Mobile\nAda;1;2\n');
    await expect(read(file)).rejects.toThrow(LeadFileError);
    await expect(read(file)).rejects.toThrow(/two-phones\.csv: several columns could hold the phone number: "Phone", "Mobile"/);
    const mapped = await read(file, { columns: { phone_number: 'Mobile', secondary_phone_numbers: ['Phone'] } });
    expect(mapped.layout?.columns).toMatchObject({ phone_number: { column: 'Mobile', how: 'mapped' }, secondary_phone_numbers: ['Phone'] });
  });

  it('refuses bytes that are neither UTF-8 nor Windows-1252 text, but keeps a readable file whose rows hold junk', async () => {
    await expect(read(write('junk.csv', Buffer.alloc(4096, 0xff)))).rejects.toThrow(/junk\.csv: the file is not readable text/);
    const rows = await read(write('junk-rows.csv', Buffer.concat([Buffer.from('phone_number,name\n\x00\x01,nul\n+15555550100,ok\n'), Buffer.from([0xff, 0xfe, 0x2c, 0x78, 0x0a])])));
    expect(phones(rows.rows)).toEqual([
      [2, 'not a phone number'],
      [3, '+15555550100'],
      [4, 'not a phone number'],
    ]);
  });

  it('refuses an old .xls workbook and --sheet on a CSV with a message saying what to do', async () => {
    const xls = write('old.xls', Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1, 0, 0]));
    await expect(read(xls)).rejects.toThrow(/old\.xls: this is an old Excel \.xls workbook, which campaignd does not read: save it as "Excel Workbook \(\.xlsx\)" or as CSV/);
    const csv = write('plain.csv', 'phone_number\n+15555550100\n');
    await expect(read(csv, { sheet: 'Leads' })).rejects.toThrow('--sheet applies to .xlsx workbooks');
  });
});

describe('.xlsx lead files', () => {
  /** A workbook as Excel writes it: shared strings, and phone numbers stored as numbers. */
  async function workbook(name: string, opts: { sharedStrings: boolean }): Promise<string> {
    const file = path.join(dir, `${n++}-${name}`);
    const wb = new ExcelJS.Workbook();
    const notes = wb.addWorksheet('Notes');
    notes.addRow(['This sheet is not the leads']);
    const leads = wb.addWorksheet('Leads 2026');
    leads.addRow(['Telefon', 'Vorname', 'Mobil', 'Kunde seit']);
    leads.addRow([4915102000001, 'Jürgen', '+4930 1234567', 2019]);
    const shown = leads.addRow([2125561234, 'Ada', null, 2020]);
    // Displayed as 2.12556E+09 in Excel; the stored value keeps every digit.
    shown.getCell(1).numFmt = '0.00000E+00';
    leads.addRow([]);
    leads.addRow(['n/a', 'Zoë', null, null]);
    leads.getColumn(1).width = 18;
    if (opts.sharedStrings) await wb.xlsx.writeFile(file);
    else {
      // The streaming writer with inline strings, as other tools write them.
      const stream = new ExcelJS.stream.xlsx.WorkbookWriter({ filename: file, useSharedStrings: false });
      const ws = stream.addWorksheet('Leads');
      ws.addRow(['phone_number', 'name']).commit();
      ws.addRow([4915102000001, 'Inline Ünïcode']).commit();
      ws.commit();
      await stream.commit();
    }
    return file;
  }

  it('reads the sheet named by --sheet, numbers stored as numbers as their exact digits, row numbers as Excel shows them', async () => {
    const file = await workbook('leads.xlsx', { sharedStrings: true });
    expect(await listSheets(file)).toEqual(['Notes', 'Leads 2026']);
    const { rows, layout } = await read(file, { sheet: 'Leads 2026', columns: { phone_number: 'Telefon', secondary_phone_numbers: ['Mobil'] } });
    expect(layout?.format).toEqual({ type: 'xlsx', sheet: 'Leads 2026' });
    expect(rows).toEqual([
      { ok: true, line: 2, lead: { phoneNumber: '+4915102000001', secondary: ['+49301234567'], variables: { Vorname: 'Jürgen', 'Kunde seit': '2019' } } },
      { ok: true, line: 3, lead: { phoneNumber: '+492125561234', secondary: [], variables: { Vorname: 'Ada', 'Kunde seit': '2020' } } },
      { ok: false, line: 5, phoneText: 'n/a', reason: 'not a phone number', variables: { Vorname: 'Zoë', 'Kunde seit': '' } },
    ]);
  });

  it('reads the first sheet by default, and names the sheets when --sheet names none of them', async () => {
    const file = await workbook('first.xlsx', { sharedStrings: true });
    await expect(read(file)).rejects.toThrow(/no phone number column in the header row \(found: "This sheet is not the leads"\)/);
    await expect(read(file, { sheet: 'Kunden' })).rejects.toThrow(/no sheet "Kunden" in the workbook \(sheets: "Notes", "Leads 2026"\): give one of them to --sheet/);
    // Sheet names match case-insensitively as a second choice.
    expect((await read(file, { sheet: 'leads 2026', columns: { phone_number: 'Telefon', secondary_phone_numbers: ['Mobil'] } })).rows).toHaveLength(3);
  });

  it('reads inline strings (no shared string table)', async () => {
    const file = await workbook('inline.xlsx', { sharedStrings: false });
    const { rows } = await read(file);
    expect(rows).toEqual([{ ok: true, line: 2, lead: { phoneNumber: '+4915102000001', secondary: [], variables: { name: 'Inline Ünïcode' } } }]);
  });

  it('refuses a file named .xlsx that is not a workbook', async () => {
    const file = write('fake.xlsx', 'phone_number\n+15555550100\n');
    await expect(read(file)).rejects.toThrow(/fake\.xlsx: the file is named \.xlsx but is not an Excel workbook/);
  });
});
