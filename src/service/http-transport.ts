import { Pool } from 'undici';

/**
 * The HTTP layer of the client: one keep-alive undici pool for the service's origin,
 * with connect and request (headers and body) timeouts. Redirects are never followed:
 * a 3xx is handed back as it is, because the service answers a bad token with a
 * redirect to a login page.
 */

export interface HttpRequest {
  method: 'GET' | 'POST' | 'PUT';
  /** Path and query, starting with `/`. */
  path: string;
  headers: Record<string, string>;
  body?: string;
}

export interface HttpAnswer {
  status: number;
  contentType: string;
  retryAfter: string | undefined;
  /** `X-RateLimit-Remaining` and `X-RateLimit-Reset`, as sent (the budget reads them). */
  rateLimitRemaining: string | undefined;
  rateLimitReset: string | undefined;
  text: string;
}

export interface HttpTransportOptions {
  baseUrl: string;
  connectTimeoutMs: number;
  requestTimeoutMs: number;
  /** Largest answer read (bytes); more is a failure, not a truncation. */
  maxBodyBytes?: number;
}

export interface HttpTransport {
  /** Sends one request; rejects only on transport failures (timeouts, resets, refusals). */
  send(req: HttpRequest): Promise<HttpAnswer>;
  /** Closes the pool's sockets. */
  close(): Promise<void>;
}

/** Creates the pool for `baseUrl`; a path prefix in `baseUrl` is kept in front of every request path. */
export function createHttpTransport(options: HttpTransportOptions): HttpTransport {
  const url = new URL(options.baseUrl);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new Error(`service base URL must be http(s), got ${url.protocol}`);
  }
  const prefix = url.pathname.replace(/\/+$/, '');
  const maxBody = options.maxBodyBytes ?? 16 * 1024 * 1024;
  const pool = new Pool(url.origin, {
    connections: 64,
    pipelining: 1,
    keepAliveTimeout: 30_000,
    connectTimeout: options.connectTimeoutMs,
    headersTimeout: options.requestTimeoutMs,
    bodyTimeout: options.requestTimeoutMs,
  });

  return {
    async send(req) {
      const res = await pool.request({
        method: req.method,
        path: prefix + req.path,
        headers: req.headers,
        body: req.body ?? null,
      });
      const text = await readLimited(res.body, maxBody);
      return {
        status: res.statusCode,
        contentType: headerValue(res.headers['content-type']) ?? '',
        retryAfter: headerValue(res.headers['retry-after']),
        rateLimitRemaining: headerValue(res.headers['x-ratelimit-remaining']),
        rateLimitReset: headerValue(res.headers['x-ratelimit-reset']),
        text,
      };
    },
    async close() {
      await pool.close();
    },
  };
}

/** An answer's body as UTF-8 text; past `maxBytes` the body is dropped and this throws. */
export async function readLimited(body: AsyncIterable<unknown> & { destroy(): unknown }, maxBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const buf = chunk as Buffer;
    size += buf.length;
    if (size > maxBytes) {
      body.destroy();
      throw new Error(`answer larger than ${maxBytes} bytes`);
    }
    chunks.push(buf);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** First value of a header that may repeat. */
function headerValue(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}
