// Every value that reaches the dashboard's HTML goes through `html`: interpolations are
// escaped unless they are already-built Html. Lead variables, campaign names, explain
// messages and transcripts may hold markup, and none of it may run in the operator's page.

/** A piece of HTML that is safe to insert as is (built by `html` or `raw`). */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text made safe for an element body or a quoted attribute value. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c] as string);
}

type Value = Html | string | number | boolean | null | undefined | readonly Value[];

function piece(v: Value): string {
  if (v === null || v === undefined || v === false) return '';
  if (v instanceof Html) return v.text;
  if (Array.isArray(v)) return v.map(piece).join('');
  return escapeHtml(String(v));
}

/** A template whose interpolations are escaped (arrays are joined, Html is kept). */
export function html(strings: TemplateStringsArray, ...values: Value[]): Html {
  let out = strings[0] ?? '';
  for (let i = 0; i < values.length; i++) out += piece(values[i] as Value) + (strings[i + 1] ?? '');
  return new Html(out);
}

/** Markup written by this code itself (SVG paths, constant snippets): never user data. */
export function raw(text: string): Html {
  return new Html(text);
}
