import type { ServerResponse } from 'node:http';

/**
 * Sends a JSON answer. `close` asks the client to drop the connection: used whenever
 * the request body was not read (refused or too large), so that unread bytes are never
 * taken for the next request on a kept-alive connection.
 */
export function sendJson(res: ServerResponse, status: number, body: unknown, options: { close?: boolean; headers?: Record<string, string> } = {}): void {
  const text = `${JSON.stringify(body)}\n`;
  const headers: Record<string, string | number> = {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
    'Cache-Control': 'no-store',
    ...options.headers,
  };
  if (options.close) headers.Connection = 'close';
  res.writeHead(status, headers);
  res.end(text);
}

/** Sends plain text (the Prometheus exposition format). */
export function sendText(res: ServerResponse, status: number, text: string, contentType: string): void {
  res.writeHead(status, {
    'Content-Type': contentType,
    'Content-Length': Buffer.byteLength(text),
    'Cache-Control': 'no-store',
  });
  res.end(text);
}
