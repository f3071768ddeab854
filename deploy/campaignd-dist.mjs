#!/usr/bin/env node
// Entry point of the container image: runs the compiled output of `npm run build`
// (dist/src/main.js) with plain node, so the image needs neither tsx nor TypeScript.
// The image copies this file to /app/bin/, next to /app/dist/.
import { main } from '../dist/src/main.js';

process.exitCode = await main(process.argv.slice(2));
