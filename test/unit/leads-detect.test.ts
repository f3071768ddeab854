import { describe, expect, it } from 'vitest';
import { detectDelimiter, firstLine, parseDelimiter } from '../../src/leads/delimiter.js';
import { detectEncoding, parseEncoding } from '../../src/leads/encoding.js';
import { StringTable } from '../../src/leads/string-table.js';
import { numberText } from '../../src/leads/xlsx.js';
import { normaliseNumberCell } from '../../src/leads/phone.js';

const bytes = (...b: number[]): Uint8Array => Uint8Array.from(b);

describe('detectEncoding', () => {
  it('takes the BOM: UTF-8, UTF-16 LE and BE, with the bytes to skip', () => {
    expect(detectEncoding(bytes(0xef, 0xbb, 0xbf, 0x61))).toEqual({ encoding: 'utf-8', bomBytes: 3 });
    expect(detectEncoding(bytes(0xff, 0xfe, 0x61, 0x00))).toEqual({ encoding: 'utf-16le', bomBytes: 2 });
    expect(detectEncoding(bytes(0xfe, 0xff, 0x00, 0x61))).toEqual({ encoding: 'utf-16be', bomBytes: 2 });
  });

  it('tells UTF-8 without BOM from Windows-1252 by whether the bytes are valid UTF-8', () => {
    expect(detectEncoding(Buffer.from('Jürgen;Müller\n', 'utf8'))).toEqual({ encoding: 'utf-8', bomBytes: 0 });
    expect(detectEncoding(Buffer.from('Jürgen;Müller\n', 'latin1'))).toEqual({ encoding: 'windows-1252', bomBytes: 0 });
    expect(detectEncoding(Buffer.from('plain ascii\n'))).toEqual({ encoding: 'utf-8', bomBytes: 0 });
    // A sample cut inside a two-byte character is still UTF-8.
    expect(detectEncoding(Buffer.from('abcü', 'utf8').subarray(0, 4))).toEqual({ encoding: 'utf-8', bomBytes: 0 });
  });

  it('lets --encoding win, skipping a BOM only when it is that encoding', () => {
    expect(detectEncoding(bytes(0xef, 0xbb, 0xbf, 0x61), 'utf-8')).toEqual({ encoding: 'utf-8', bomBytes: 3 });
    expect(detectEncoding(Buffer.from('Jürgen', 'utf8'), 'windows-1252')).toEqual({ encoding: 'windows-1252', bomBytes: 0 });
    expect(parseEncoding('UTF16LE')).toBe('utf-16le');
    expect(parseEncoding('cp1252')).toBe('windows-1252');
    expect(parseEncoding('latin1')).toBe('windows-1252');
    expect(parseEncoding('ebcdic')).toBeUndefined();
  });
});

describe('detectDelimiter', () => {
  it('picks the separator that splits the header row most, outside quotes', () => {
    expect(detectDelimiter('phone_number,first_name,last_name')).toBe(',');
    expect(detectDelimiter('Telefon;Vorname;Nachname')).toBe(';');
    expect(detectDelimiter('Phone\tName\tCity')).toBe('\t');
    expect(detectDelimiter('phone|name|city')).toBe('|');
    expect(detectDelimiter('"Name, first";"Name, last";Phone')).toBe(';');
    expect(detectDelimiter('phone')).toBe(',');
  });

  it('reads the header line up to its first unquoted line end, and --delimiter names', () => {
    expect(firstLine('a;"b\nc";d\r\n1;2;3')).toBe('a;"b\nc";d');
    expect(parseDelimiter('semicolon')).toBe(';');
    expect(parseDelimiter('TAB')).toBe('\t');
    expect(parseDelimiter('\\t')).toBe('\t');
    expect(parseDelimiter('|')).toBe('|');
    expect(parseDelimiter('#')).toBeUndefined();
  });
});

describe('numberText (xlsx numbers stored as numbers)', () => {
  it('keeps the digits of integers, including exponent forms, never a rounded float', () => {
    expect(numberText('4915102000001')).toBe('4915102000001');
    expect(numberText('2125561234')).toBe('2125561234');
    expect(numberText('4.915102000001E+12')).toBe('4915102000001');
    expect(numberText('2.12556E+9')).toBe('2125560000');
    expect(numberText('491510200000123')).toBe('491510200000123');
    expect(numberText('12.5')).toBe('12.5');
  });
});

describe('StringTable', () => {
  it('stores many strings compactly and returns each by index', () => {
    const t = new StringTable();
    for (let i = 0; i < 50_000; i++) t.add(i % 7 === 0 ? `Jürgen ${i} 電話` : `n${i}`);
    expect(t.size).toBe(50_000);
    expect(t.get(0)).toBe('Jürgen 0 電話');
    expect(t.get(49_999)).toBe('n49999');
    expect(t.get(50_000)).toBeUndefined();
  });
});

describe('normaliseNumberCell (a phone number Excel stored as a number)', () => {
  it('reads digits that start with the country code internationally (Excel dropped the "+"), others nationally (Excel dropped the trunk 0)', () => {
    expect(normaliseNumberCell('4915102000001', 'DE')).toEqual({ ok: true, e164: '+4915102000001' });
    expect(normaliseNumberCell('15102000001', 'DE')).toEqual({ ok: true, e164: '+4915102000001' });
    expect(normaliseNumberCell('30123456', 'DE')).toEqual({ ok: true, e164: '+4930123456' });
    expect(normaliseNumberCell('2125561234', 'US')).toEqual({ ok: true, e164: '+12125561234' });
    expect(normaliseNumberCell('12125561234', 'US')).toEqual({ ok: true, e164: '+12125561234' });
    expect(normaliseNumberCell('4915102000001')).toEqual({ ok: true, e164: '+4915102000001' });
    expect(normaliseNumberCell('12.5', 'DE').ok).toBe(false);
  });
});
