// The package version, in a file of its own so that src/main.ts (`--version`) and the commands
// it loads (run, status, demo) can all import it without importing each other.

let cachedVersion: string | undefined;

/**
 * The package version, from the nearest package.json above this file: src/ (tsx), dist/src/
 * (tsc's output) or dist/app/ (the bundle, where this file is one of its chunks). Read once.
 */
export async function version(): Promise<string> {
  if (cachedVersion) return cachedVersion;
  const { readFile } = await import('node:fs/promises');
  for (const rel of ['../package.json', '../../package.json']) {
    try {
      const pkg = JSON.parse(await readFile(new URL(rel, import.meta.url), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'campaignd' && pkg.version) return (cachedVersion = pkg.version);
    } catch {
      // not at this level
    }
  }
  return (cachedVersion = '0.0.0');
}
