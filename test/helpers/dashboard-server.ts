// The dashboard alone on a loopback HTTP server, on a store a test or a benchmark filled:
// no engine, no service, a clock that does not move unless the caller's does. Shared by the
// many-campaigns Chromium test, the sessions test (two of these on one store are two
// instances) and bench/dashboard.ts.
import os from 'node:os';
import type { Kysely } from 'kysely';
import { createGuard, type Guard } from '../../src/dashboard/guard.js';
import { createDashboard, type Dashboard } from '../../src/dashboard/routes.js';
import { createMetrics } from '../../src/http/metrics.js';
import { startHttpServer } from '../../src/http/server.js';
import { silentLogger } from '../../src/log/logger.js';
import type { Database } from '../../src/store/types.js';
import type { Clock } from '../../src/time/clock.js';

export interface DashboardServer {
  url: string;
  guard: Guard;
  close(): Promise<void>;
}

/** Serves the dashboard of `db` with its own guard for `token`; `wrap` may time or watch each request. */
export async function startDashboardServer(opts: {
  db: Kysely<Database>;
  clock: Clock;
  token: string;
  version?: string;
  hostname?: string;
  wrap?: (dashboard: Dashboard) => Dashboard;
  /** Where uploads are staged (default: the system's temporary directory). */
  stagingDir?: string;
  /** Called when the dashboard would wake the engine. */
  onStateChanged?: () => void;
}): Promise<DashboardServer> {
  const logger = silentLogger();
  const guard = createGuard({ token: opts.token, db: opts.db, clock: opts.clock });
  const dashboard = createDashboard({
    db: opts.db,
    clock: opts.clock,
    logger,
    guard,
    version: opts.version ?? 'test',
    hostname: opts.hostname ?? os.hostname(),
    isPidAlive: () => true,
    rateLimit: { requestsPerMinute: 100, burst: 20, burstWindowSeconds: 10 },
    stagingDir: opts.stagingDir ?? os.tmpdir(),
    ...(opts.onStateChanged ? { onStateChanged: opts.onStateChanged } : {}),
  });
  const server = await startHttpServer({
    host: '127.0.0.1',
    port: 0,
    logger,
    metrics: createMetrics(),
    clock: opts.clock,
    ready: async () => ({ ok: true, checks: {} }),
    webhook: { secret: () => undefined, handle: async () => ({ accepted: false }) },
    dashboard: opts.wrap ? opts.wrap(dashboard) : dashboard,
  });
  return { url: `http://127.0.0.1:${server.port}`, guard, close: () => server.close() };
}
