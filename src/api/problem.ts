import type { ServerResponse } from 'node:http';

// Every refusal of the API is an RFC 9457 problem document (`application/problem+json`):
// a client reads `status` and `title` to decide, a person reads `detail` to fix the request,
// and an invalid body lists each field it got wrong as a JSON pointer.

/** One wrong field of a request body, query or path: where (RFC 6901 pointer) and why. */
export interface FieldError {
  pointer: string;
  message: string;
}

export interface ProblemDocument {
  type: string;
  title: string;
  status: number;
  detail: string;
  errors?: FieldError[];
}

/** Thrown by a route (or the dispatcher) to answer with a problem document. */
export class ApiProblem extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    readonly detail: string,
    readonly errors?: FieldError[],
    /** Extra response headers (Allow, Retry-After…). */
    readonly headers?: Record<string, string>,
  ) {
    super(`${status} ${title}: ${detail}`);
    this.name = 'ApiProblem';
  }

  document(): ProblemDocument {
    // `type` names the kind of problem, stable for clients to match on ("about:blank"
    // would say only the HTTP status, which several kinds share); a URN, since there is
    // no page to point at: the README's API section lists the titles.
    return { type: `urn:campaignd:problem:${slug(this.title)}`, title: this.title, status: this.status, detail: this.detail, ...(this.errors ? { errors: this.errors } : {}) };
  }
}

/** Sends a problem document. `close` drops the connection when the request body was left unread. */
export function sendProblem(res: ServerResponse, problem: ApiProblem, close = false): void {
  const text = `${JSON.stringify(problem.document())}\n`;
  res.writeHead(problem.status, {
    'Content-Type': 'application/problem+json',
    'Content-Length': Buffer.byteLength(text),
    'Cache-Control': 'no-store',
    ...problem.headers,
    ...(close ? { Connection: 'close' } : {}),
  });
  res.end(text);
}

function slug(title: string): string {
  return title.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');
}
