/** What a command may touch of the outside world; tests pass their own. */
export interface CliIo {
  stdout: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
  cwd: string;
}

/** An error meant for the person at the terminal: one clear line and an exit code. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/**
 * Whether `err` is a CliError from any copy of this module: `status` is bundled on its own,
 * with its own copy (scripts/bundle.mjs), so `instanceof` alone misses its errors in main.
 */
export function isCliError(err: unknown): err is CliError {
  return err instanceof CliError || (err instanceof Error && err.name === 'CliError' && typeof (err as Partial<CliError>).exitCode === 'number');
}

/** Exit codes shared by every command. */
export const EXIT = {
  ok: 0,
  /** Problems found (validate), or a campaign broken / token rejected (status). */
  problems: 1,
  /** Bad usage, or a config that cannot be read at all. */
  usage: 2,
  /** The database is locked by another daemon, or newer than this version. */
  database: 3,
} as const;

/** The exit code of a command whose reader went away: a process ended by SIGPIPE, as the shell reports it. */
export const EXIT_STDOUT_CLOSED = 128 + 13;

export function processIo(): CliIo {
  // `campaignd status | head` closes the pipe while status writes: node ignores SIGPIPE and
  // reports EPIPE as an error event, which, unhandled, ended the command with a stack trace.
  // The reader has all it wanted; the command ends quietly, as cat or grep would.
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
    process.exit(EXIT_STDOUT_CLOSED);
  });
  return { stdout: process.stdout, stderr: process.stderr, env: process.env, cwd: process.cwd() };
}
