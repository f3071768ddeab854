// Writes config/campaign.schema.json from the campaign field table: npx tsx src/config/write-schema.ts
import { writeFile } from 'node:fs/promises';
import { campaignJsonSchemaText } from './json-schema.js';

const target = new URL('../../config/campaign.schema.json', import.meta.url);
await writeFile(target, campaignJsonSchemaText());
process.stdout.write(`wrote ${target.pathname}\n`);
