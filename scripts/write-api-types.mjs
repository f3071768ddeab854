// `npm run api:types`: writes test/helpers/api-types.ts, the TypeScript types of
// docs/openapi.json that openapi-fetch's client uses in the API tests, the way a CRM's
// developer would generate them. test/unit/openapi-document.test.ts fails when the file
// is not what openapi-typescript makes of the document.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { apiTypesSource } from '../test/helpers/api-types-source.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const doc = JSON.parse(fs.readFileSync(path.join(root, 'docs/openapi.json'), 'utf8'));
fs.writeFileSync(path.join(root, 'test/helpers/api-types.ts'), await apiTypesSource(doc));
