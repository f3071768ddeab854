// A pre-dial check endpoint on loopback for tests: real HTTP, an answer chosen per request
// (by the posted lead), every request kept with its headers. 'hang' never answers (until
// close), for timeouts.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface PredialRequestSeen {
  body: string;
  json: { campaign: string; lead_id: number; phone_number: string; variables: Record<string, unknown>; attempt: number; external_id?: string };
  headers: http.IncomingHttpHeaders;
}

export type PredialAnswer = { status: number; body: string } | 'hang';

export interface PredialServer {
  url: string;
  seen: PredialRequestSeen[];
  close(): Promise<void>;
}

/** Starts the endpoint; `answer` decides each response (it may be async: the test can look at the store meanwhile). */
export async function startPredialServer(answer: (req: PredialRequestSeen) => PredialAnswer | Promise<PredialAnswer>): Promise<PredialServer> {
  const seen: PredialRequestSeen[] = [];
  const hanging = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const entry: PredialRequestSeen = { body, json: JSON.parse(body) as PredialRequestSeen['json'], headers: req.headers };
      seen.push(entry);
      void Promise.resolve(answer(entry)).then((a) => {
        if (a === 'hang') {
          hanging.add(res);
          return;
        }
        res.writeHead(a.status, { 'content-type': 'application/json' });
        res.end(a.body);
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/predial`,
    seen,
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A JSON answer with status 200. */
export function ok(value: unknown): PredialAnswer {
  return { status: 200, body: JSON.stringify(value) };
}
