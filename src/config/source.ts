// A config file read as written: its plain value plus a way to find the line and column of
// any field path. JSON files go through JSON.parse first (so JSON's own syntax rules apply)
// and then through the YAML parser, which accepts JSON and gives exact node positions.
import { isAlias, isMap, isPair, isScalar, isSeq, LineCounter, parseDocument, visit, type Document, type Node } from 'yaml';

/** A field path: map keys and sequence indexes, e.g. ['allowed_days', 2]. */
export type FieldPath = readonly (string | number)[];

export interface Position {
  line: number;
  column: number;
}

export interface SyntaxProblem extends Position {
  message: string;
}

export interface ParsedSource {
  /** The plain value (undefined when the file is empty or did not parse). */
  value: unknown;
  /** Syntax errors; when non-empty, `value` must not be trusted. */
  syntaxErrors: SyntaxProblem[];
  /** Where a field sits: its key (`'key'`) or its value (`'value'`); the nearest existing parent otherwise. */
  locate(path: FieldPath, part?: 'key' | 'value'): Position | undefined;
}

/** Dotted display form of a path: `leads.file`, `allowed_days[2]`. */
export function formatPath(path: FieldPath): string {
  let out = '';
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else out += out ? `.${segment}` : segment;
  }
  return out;
}

/** Parse YAML or (for `.json` files) JSON text, keeping node positions. */
export function parseSource(file: string, text: string): ParsedSource {
  const lineCounter = new LineCounter();
  const isJson = file.toLowerCase().endsWith('.json');
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  if (isJson) {
    const jsonError = jsonSyntaxError(body);
    if (jsonError) return { value: undefined, syntaxErrors: [jsonError], locate: () => undefined };
  }
  const doc = parseDocument(body, { lineCounter, prettyErrors: true, uniqueKeys: true });
  const syntaxErrors = doc.errors.map((e) => ({
    message: firstLine(e.message),
    line: e.linePos?.[0].line ?? 1,
    column: e.linePos?.[0].col ?? 1,
  }));
  const position = (offset: number): Position => {
    const p = lineCounter.linePos(offset);
    return { line: p.line, column: p.col };
  };
  const locate = (path: FieldPath, part: 'key' | 'value' = 'value'): Position | undefined => {
    const found = findNode(doc, path, part);
    return found === undefined ? undefined : position(found);
  };
  let value: unknown;
  if (syntaxErrors.length === 0) {
    try {
      value = doc.toJS({ maxAliasCount: 1000 });
    } catch (err) {
      // Unresolved or excessive aliases only show up when the document is turned into values.
      const at = position(unresolvedAliasOffset(doc) ?? doc.contents?.range?.[0] ?? 0);
      syntaxErrors.push({ message: err instanceof Error ? firstLine(err.message) : String(err), ...at });
    }
  }
  return { value, syntaxErrors, locate };
}

/** Where the first alias without its anchor is, so the error points at that line. */
function unresolvedAliasOffset(doc: Document): number | undefined {
  let found: number | undefined;
  visit(doc, {
    Alias(_key, node) {
      if (node.resolve(doc) !== undefined) return undefined;
      found = node.range?.[0];
      return visit.BREAK;
    },
  });
  return found;
}

// yaml's pretty messages end with " at line N, column M:" and a code excerpt; the excerpt could
// echo a secret written in the file, so only the first sentence is kept.
function firstLine(message: string): string {
  const line = message.split('\n')[0] ?? message;
  return line.replace(/ at line \d+, column \d+:?$/, '');
}

function jsonSyntaxError(text: string): SyntaxProblem | undefined {
  try {
    JSON.parse(text);
    return undefined;
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    const match = /position (\d+)/.exec(message);
    const offset = match ? Number(match[1]) : text.length;
    const before = text.slice(0, offset);
    const line = before.split('\n').length;
    const column = offset - before.lastIndexOf('\n');
    return { message: `invalid JSON: ${message.replace(/ in JSON at position \d+.*$/, '')}`, line, column };
  }
}

// Offset of the node at `path`, or of its nearest existing ancestor's key.
function findNode(doc: Document, path: FieldPath, part: 'key' | 'value'): number | undefined {
  let node: unknown = doc.contents;
  let fallback: number | undefined = rangeStart(node);
  for (let i = 0; i < path.length; i++) {
    const segment = path[i];
    const last = i === path.length - 1;
    if (isAlias(node)) node = node.resolve(doc);
    if (isMap(node)) {
      const pair = node.items.find((p) => isPair(p) && isScalar(p.key) && String(p.key.value) === String(segment));
      if (!pair) return fallback;
      const keyStart = rangeStart(pair.key);
      if (last && part === 'key') return keyStart ?? fallback;
      // A missing child field is best shown at its parent's key ("leads:"), not at a sibling.
      fallback = keyStart ?? fallback;
      node = pair.value;
      if (node === null || node === undefined) return fallback;
    } else if (isSeq(node) && typeof segment === 'number') {
      const item = node.items[segment];
      if (item === undefined) return fallback;
      node = item;
      fallback = rangeStart(node) ?? fallback;
    } else {
      return fallback;
    }
    if (last) return rangeStart(node) ?? fallback;
  }
  return fallback;
}

function rangeStart(node: unknown): number | undefined {
  const range = (node as Node | null | undefined)?.range;
  return range ? range[0] : undefined;
}
