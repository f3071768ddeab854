// Reading the recipes of deploy/ in the tests that keep them consistent (deploy-*.test.ts).
import fs from 'node:fs';
import path from 'node:path';

/** The repository's root. */
export const repoRoot = path.resolve(import.meta.dirname, '../..');

/** A file of the repository, by its path from the root. */
export const readRepoFile = (file: string): string => fs.readFileSync(path.join(repoRoot, file), 'utf8');

/** The parts of a compose service these tests read. */
export interface ComposeService {
  image?: string;
  command?: string[];
  hostname?: string;
  environment?: Record<string, string>;
  volumes?: string[];
  secrets?: string[];
  healthcheck?: { test?: string[]; disable?: boolean };
  entrypoint?: string[];
}
