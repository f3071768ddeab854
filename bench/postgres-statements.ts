// `npx tsx bench/postgres-statements.ts [BENCH ARGS…]`: where the PostgreSQL server's time
// goes for another bench's run, by statement. Starts an embedded server with
// pg_stat_statements (every statement, nested ones from triggers included, with its planning
// time), runs `bench/engine-blackbox.ts --dialect postgres` (or the bench named first, e.g.
// `bench/api.ts --dialect postgres --quick`) against it through BENCH_POSTGRES_URL, then prints
// the statements that took the most of the server's time, and the totals: top level (what
// the daemon sent) and nested (what triggers ran). bench/RESULTS.md, "PostgreSQL: each
// statement parsed and planned once", used it.
import { spawnSync } from 'node:child_process';
import pg from 'pg';
import { startPostgresServer } from '../test/helpers/postgres-server.js';
import { POSTGRES_URL_ENV } from './lib/bench-db.js';

const args = process.argv.slice(2);
const bench = args[0]?.endsWith('.ts') ? args.splice(0, 1) : ['bench/engine-blackbox.ts', '--dialect', 'postgres'];
const server = await startPostgresServer({
  fsync: true,
  settings: ['shared_preload_libraries=pg_stat_statements', 'pg_stat_statements.track=all', 'pg_stat_statements.track_planning=on', 'pg_stat_statements.max=5000'],
});
const client = new pg.Client({ connectionString: server.url });
try {
  await client.connect();
  await client.query('create extension if not exists pg_stat_statements');
  const run = spawnSync('npx', ['tsx', ...bench, ...args], { stdio: 'inherit', env: { ...process.env, [POSTGRES_URL_ENV]: server.url } });
  if (run.status !== 0) throw new Error(`${bench.join(' ')} failed (exit ${String(run.status)})`);
  // The bench's own databases only: not this connection's `postgres`.
  const others = `dbid <> (select oid from pg_database where datname = 'postgres')`;
  const top = await client.query<{ calls: string; exec: number; plan: number; toplevel: boolean; rows: string; query: string }>(
    `select calls, total_exec_time as exec, total_plan_time as plan, toplevel, rows, left(regexp_replace(query, '\\s+', ' ', 'g'), 150) as query
       from pg_stat_statements where ${others} order by total_exec_time + total_plan_time desc limit 30`,
  );
  console.log('\n   calls   exec ms   plan ms  level     rows  statement');
  for (const r of top.rows) {
    console.log(`${r.calls.padStart(8)} ${r.exec.toFixed(1).padStart(9)} ${r.plan.toFixed(1).padStart(9)}  ${r.toplevel ? 'top   ' : 'nested'} ${r.rows.padStart(8)}  ${r.query}`);
  }
  const sums = await client.query<{ toplevel: boolean; calls: string; exec: number; plan: number }>(
    `select toplevel, sum(calls) as calls, sum(total_exec_time) as exec, sum(total_plan_time) as plan from pg_stat_statements where ${others} group by toplevel order by toplevel desc`,
  );
  for (const s of sums.rows) {
    console.log(`${s.toplevel ? 'top level' : 'nested   '}: ${s.calls} statements, executing ${s.exec.toFixed(0)} ms, planning ${s.plan.toFixed(0)} ms`);
  }
} finally {
  await client.end();
  await server.stop();
}
