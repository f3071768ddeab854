import { parseArgs, type ParseArgsConfig } from 'node:util';
import { didYouMean } from '../config/suggest.js';
import { CliError, EXIT } from './io.js';

// Every command's arguments go through here, so that a mistyped option gets campaignd's own
// one-line message with the command's usage (exit 2) rather than Node's parser text.

type Parsed<T extends ParseArgsConfig> = ReturnType<typeof parseArgs<T>>;

/** parseArgs (strict unless the config says otherwise), with its errors said as campaignd says them; `help` is the command's --help text. */
export function parseCommandArgs<T extends ParseArgsConfig>(config: T, help: string): Parsed<T> {
  try {
    return parseArgs(config);
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (!(err instanceof TypeError) || typeof code !== 'string' || !code.startsWith('ERR_PARSE_ARGS')) throw err;
    throw new CliError(`${parseProblem(code, err.message, Object.keys(config.options ?? {}))}; usage: ${usageOf(help)}`, EXIT.usage);
  }
}

/** The command's usage, from its help text: the "Usage:" line and the lines that continue it. */
export function usageOf(help: string): string {
  const lines = help.split('\n');
  const start = lines.findIndex((l) => l.startsWith('Usage: '));
  if (start < 0) return help.split('\n', 1)[0] ?? '';
  const parts = [lines[start]!.slice('Usage: '.length).trim()];
  for (const line of lines.slice(start + 1)) {
    if (!/^\s+\S/.test(line)) break;
    parts.push(line.trim());
  }
  return parts.join(' ');
}

function parseProblem(code: string, message: string, names: string[]): string {
  // Node names the option or argument in quotes: '--json', '-x', '--config <value>', 'foo'.
  const quoted = /'([^']*)'/.exec(message)?.[1] ?? '';
  const option = quoted.split(' ')[0]!.split(',').at(-1)!.trim();
  switch (code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION': {
      const guess = option.startsWith('--') ? didYouMean(option.slice(2), names) : undefined;
      return `unknown option ${option}${guess ? ` (did you mean --${guess}?)` : ''}`;
    }
    case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL':
      return `unexpected argument "${quoted}": this command takes options only`;
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
      if (/does not take an argument/.test(message)) return `${option} takes no value`;
      return `${option} needs a value`;
    default:
      return (message.split(/[.\n]/, 1)[0] ?? message).toLowerCase();
  }
}
