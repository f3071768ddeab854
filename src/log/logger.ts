import pino, { type Logger, type DestinationStream } from 'pino';

export type { Logger } from 'pino';

/**
 * Paths that may carry a secret. Redaction is the second line of defence: secrets are
 * never put into log objects on purpose, but an error that echoes a request or a config
 * object must not leak them either.
 */
export const REDACT_PATHS = [
  'token',
  '*.token',
  'secret',
  '*.secret',
  'webhookSecret',
  '*.webhookSecret',
  'authorization',
  '*.authorization',
  'Authorization',
  '*.Authorization',
  'headers.authorization',
  '*.headers.authorization',
  'headers["x-campaignd-secret"]',
  '*.headers["x-campaignd-secret"]',
];

export interface LoggerOptions {
  level?: string;
  /** Human-readable colour output (when stdout is a terminal). */
  pretty?: boolean;
  /** Where JSON lines go; defaults to stdout. Tests pass a stream to inspect lines. */
  destination?: DestinationStream;
  /** Exact secret values to scrub from every line, whatever field they hide in. */
  secrets?: () => readonly string[];
}

/** Creates the root logger; every component receives a child of it, never a global. */
export function createLogger(options: LoggerOptions = {}): Logger {
  const level = options.level ?? 'info';
  const redactBase = { redact: { paths: REDACT_PATHS, censor: '[redacted]' }, level };
  const scrub = options.secrets;
  const hooks = scrub
    ? {
        streamWrite(line: string): string {
          let out = line;
          // includes() first: a daemon with 200 accounts has 200 tokens, and a split and
          // join per token made every line cost as much as 200 copies of it.
          for (const s of scrub()) if (s.length >= 4 && out.includes(s)) out = out.split(s).join('[redacted]');
          return out;
        },
      }
    : undefined;
  // pino fails on `hooks: undefined`, so the key is only present when there are hooks.
  const base = hooks ? { ...redactBase, hooks } : redactBase;
  if (options.pretty && !options.destination) {
    return pino({ ...base, transport: { target: 'pino-pretty', options: { colorize: true } } });
  }
  return pino(base, options.destination ?? pino.destination({ dest: 1, sync: false }));
}

/** A logger that drops everything, for tests that do not look at logs. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
