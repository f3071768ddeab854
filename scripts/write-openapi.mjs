// Third step of `npm run build`: writes docs/openapi.json, the API's OpenAPI 3.1 document,
// from the routes tsc just compiled (dist/src/api/). The daemon serves the same document at
// /api/v1/openapi.json; test/unit/openapi-document.test.ts fails when the file in the
// repository is not what the routes generate.
//
//   node scripts/write-openapi.mjs [DIST]      (DIST defaults to ./dist)
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.resolve(process.argv[2] ?? path.join(root, 'dist'));
const { openApiDocument } = await import(pathToFileURL(path.join(dist, 'src/api/openapi.js')).href);
const { apiRoutes } = await import(pathToFileURL(path.join(dist, 'src/api/routes/index.js')).href);
const { version } = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
const text = `${JSON.stringify(openApiDocument(apiRoutes, version), null, 2)}\n`;
const file = path.join(root, 'docs/openapi.json');
// Written only when it changed, so a build leaves the checkout's timestamps alone.
if (!fs.existsSync(file) || fs.readFileSync(file, 'utf8') !== text) fs.writeFileSync(file, text);
