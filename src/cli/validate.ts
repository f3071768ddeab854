import { CliError, type CliIo } from './io.js';

// Placeholder until this command is built; it fails loudly rather than pretending.
export async function validateCommand(_args: string[], _io: CliIo): Promise<number> {
  throw new CliError('"validate" is not implemented yet', 1);
}
