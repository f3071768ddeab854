#!/usr/bin/env node
// Entry point for `npx campaignd`. Runs the TypeScript sources through tsx so that a
// fresh `npm ci` needs no build step; `npm run build` + `node dist/src/main.js` is the
// compiled alternative used by the container image.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/main.ts');
process.exitCode = await main(process.argv.slice(2));
