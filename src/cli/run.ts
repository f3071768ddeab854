import { CliError, type CliIo } from './io.js';

// Placeholder until this command is built; it fails loudly rather than pretending.
export async function runCommand(_args: string[], _io: CliIo): Promise<number> {
  throw new CliError('"run" is not implemented yet', 1);
}
