// Loaded into a daemon child process with `node --import tsx --import THIS_FILE` (bench/
// accounts.ts --statements): counts and times every SQL statement the daemon runs
// (statement-log.ts) and writes them, most time first, as JSON to the file named by
// BENCH_STATEMENTS_FILE when the process exits. A diagnostic: the tsx loader and the
// patch add their own small cost to the daemon's CPU figure.
import fs from 'node:fs';
import { installStatementLog } from './statement-log.js';

const file = process.env.BENCH_STATEMENTS_FILE;
if (file) {
  const log = installStatementLog();
  process.on('exit', () => fs.writeFileSync(file, JSON.stringify(log.stats())));
}
