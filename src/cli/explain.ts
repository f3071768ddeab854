import { CliError, type CliIo } from './io.js';

// Placeholder until this command is built; it fails loudly rather than pretending.
export async function explainCommand(_args: string[], _io: CliIo): Promise<number> {
  throw new CliError('"explain" is not implemented yet', 1);
}
