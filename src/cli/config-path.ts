import path from 'node:path';
import type { CliIo } from './io.js';

/** `--config` when given, else $CAMPAIGND_CONFIG, else ./config/campaignd.yaml. */
export function resolveConfigPath(flag: string | undefined, io: CliIo): string {
  const chosen = flag ?? io.env.CAMPAIGND_CONFIG ?? path.join('config', 'campaignd.yaml');
  return path.resolve(io.cwd, chosen);
}
