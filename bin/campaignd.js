#!/usr/bin/env node
// Entry point for `npx campaignd` (development, the demo, the tests). Runs the TypeScript
// sources through tsx so that a fresh `npm ci` needs no build step. The deployments run
// the compiled build instead (`npm run build`, bin/campaignd-dist.mjs): the tsx loader
// and its worker thread cost 20–45 MB of resident memory that a daemon should not carry.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/main.ts');
process.exitCode = await main(process.argv.slice(2));
