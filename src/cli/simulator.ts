import pino from 'pino';
import { createLogger } from '../log/logger.js';
import { isScenarioChoice, scenarioMix, SCENARIO_NAMES } from '../simulator/conversations.js';
import { parseRateLimit } from '../simulator/rate-limit.js';
import { startSimulator } from '../simulator/server.js';
import { OUTCOME_NAMES, type OutcomeName, type SimulatorOptions } from '../simulator/types.js';
import { scaledClock, systemClock } from '../time/clock.js';
import { parseCommandArgs } from './args.js';
import { CliError, EXIT, type CliIo } from './io.js';

export const SIMULATOR_HELP = `campaignd simulator: serve the Voice Assistant Calling Service simulator

Usage: campaignd simulator [options]

  --port N              port to listen on (default 8787; 0 picks a free one)
  --host H              address to listen on (default 127.0.0.1)
  --token T             a user's bearer token; repeat for more users (default: one random token)
  --time-scale X        simulated time runs X times faster (default 1)
  --seed N              seed of call outcomes and faults (default 1)
  --call-id             answer make_call with call_id and status, as the public docs show
  --rate-limit R        emulate the live limit, e.g. 100/min (bursts of 20 per 10 s);
                        100/min,lockout=60 also refuses a token for 60 s after each trip
  --outcomes LIST       shares of outcomes, e.g. human=0.6,voicemail=0.1,busy=0.1,no-answer=0.15,failed=0.05
  --call-duration A-B   talk time of answered calls in simulated seconds (default 30-180)
  --conversations S     what people say when they answer: callback-en, callback-de, interested,
                        not-interested, wrong-number, or mix (one drawn per call); default none
  --conversation-mix L  shares of mix, e.g. callback-en=0.15,callback-de=0.1,interested=0.3,not-interested=0.3,wrong-number=0.15
  --tool-limit N        mid call tools per account (default 5)
  --leads-paginated     answer GET /api/user/leads with the pagination envelope
  --auth-redirect       answer a bad token with a 302 to a login page instead of 401
  --log-level L         pino level for the JSON logs on stderr (default info)
  --help                this text

Test controls (loopback only, no token): GET /__sim/calls, GET /__sim/webhooks,
GET /__sim/stats (limiter trips), POST /__sim/faults, POST /__sim/reset-faults, POST /__sim/outcomes, POST /__sim/reset-outcomes,
POST /__sim/extracted, POST /__sim/conversations, GET /__sim/conversations, POST /__sim/auth. Runs until SIGINT or SIGTERM.
`;

/** `campaignd simulator`: starts the simulator and keeps it up until a signal. */
export async function simulatorCommand(args: string[], io: CliIo, stop?: AbortSignal): Promise<number> {
  const { values } = parseCommandArgs(
    {
      args,
      options: {
        port: { type: 'string' },
        host: { type: 'string' },
        token: { type: 'string', multiple: true },
        'time-scale': { type: 'string' },
        seed: { type: 'string' },
        'call-id': { type: 'boolean' },
        'rate-limit': { type: 'string' },
        outcomes: { type: 'string' },
        'call-duration': { type: 'string' },
        conversations: { type: 'string' },
        'conversation-mix': { type: 'string' },
        'tool-limit': { type: 'string' },
        'leads-paginated': { type: 'boolean' },
        'auth-redirect': { type: 'boolean' },
        'log-level': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
    },
    SIMULATOR_HELP,
  );
  if (values.help) {
    io.stdout.write(SIMULATOR_HELP);
    return EXIT.ok;
  }
  const timeScale = number('--time-scale', values['time-scale'] ?? '1', (n) => n > 0);
  const logger = createLogger({
    level: values['log-level'] ?? 'info',
    destination: pino.destination({ dest: 2, sync: false }),
  });
  const opts: SimulatorOptions = {
    host: values.host ?? '127.0.0.1',
    port: number('--port', values.port ?? '8787', (n) => Number.isInteger(n) && n >= 0 && n < 65536),
    tokens: values.token ?? [],
    clock: scaledClock(timeScale),
    // Fault latency and webhook timeouts are real network waits, not simulated time.
    networkClock: systemClock,
    seed: number('--seed', values.seed ?? '1', Number.isInteger),
    callIdInResponse: values['call-id'] ?? false,
    rateLimit: values['rate-limit'] ? rateLimit(values['rate-limit']) : null,
    outcomes: values.outcomes ? parseOutcomes(values.outcomes) : undefined,
    callDurationSeconds: values['call-duration'] ? parseRange(values['call-duration']) : undefined,
    conversations: values.conversations === undefined ? undefined : scenarioChoice(values.conversations),
    conversationMix: values['conversation-mix'] ? parseMix(values['conversation-mix']) : undefined,
    toolLimit: number('--tool-limit', values['tool-limit'] ?? '5', (n) => Number.isInteger(n) && n >= 0),
    leadsPaginated: values['leads-paginated'] ?? false,
    badTokenAnswer: values['auth-redirect'] ? 'redirect302' : 'json401',
    logger,
  };
  let sim;
  try {
    sim = await startSimulator(opts);
  } catch (err) {
    throw new CliError(`cannot start: ${err instanceof Error ? err.message : String(err)}`, EXIT.problems);
  }
  io.stdout.write(`simulator listening on ${sim.url} (time x${timeScale}, seed ${opts.seed ?? 1})\n`);
  sim.tokens.forEach((t, i) => io.stdout.write(`token ${i}: ${t}\n`));

  await waitForStop(stop);
  await sim.close();
  logger.flush();
  return EXIT.ok;
}

function waitForStop(stop: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      process.off('SIGINT', done);
      process.off('SIGTERM', done);
      resolve();
    };
    process.once('SIGINT', done);
    process.once('SIGTERM', done);
    if (stop?.aborted) done();
    stop?.addEventListener('abort', done, { once: true });
  });
}

function number(flag: string, text: string, ok: (n: number) => boolean): number {
  const n = Number(text);
  if (text.trim() === '' || !Number.isFinite(n) || !ok(n)) throw new CliError(`${flag}: invalid value "${text}"`, EXIT.usage);
  return n;
}

function rateLimit(text: string): SimulatorOptions['rateLimit'] {
  try {
    return parseRateLimit(text);
  } catch (err) {
    throw new CliError(`--rate-limit: ${(err as Error).message}`, EXIT.usage);
  }
}

function parseOutcomes(text: string): Partial<Record<OutcomeName, number>> {
  const out: Partial<Record<OutcomeName, number>> = {};
  for (const part of text.split(',')) {
    const [name, share] = part.split('=').map((s) => s.trim());
    if (!name || !(OUTCOME_NAMES as readonly string[]).includes(name)) {
      throw new CliError(`--outcomes: unknown outcome "${name ?? ''}" (use ${OUTCOME_NAMES.join(', ')})`, EXIT.usage);
    }
    out[name as OutcomeName] = number(`--outcomes ${name}`, share ?? '', (n) => n >= 0);
  }
  return out;
}

function scenarioChoice(text: string): SimulatorOptions['conversations'] {
  if (!isScenarioChoice(text)) throw new CliError(`--conversations: unknown scenario "${text}" (use ${SCENARIO_NAMES.join(', ')} or mix)`, EXIT.usage);
  return text;
}

function parseMix(text: string): SimulatorOptions['conversationMix'] {
  const shares: Record<string, number> = {};
  for (const part of text.split(',')) {
    const [name, share] = part.split('=').map((s) => s.trim());
    shares[name ?? ''] = number(`--conversation-mix ${name ?? ''}`, share ?? '', (n) => n >= 0);
  }
  try {
    scenarioMix(shares);
  } catch (err) {
    throw new CliError(`--conversation-mix: ${(err as Error).message}`, EXIT.usage);
  }
  return shares;
}

function parseRange(text: string): { min: number; max: number } {
  const m = /^(\d+)-(\d+)$/.exec(text.trim());
  if (!m || Number(m[1]) > Number(m[2]) || Number(m[1]) < 1) throw new CliError(`--call-duration: expected MIN-MAX seconds, got "${text}"`, EXIT.usage);
  return { min: Number(m[1]), max: Number(m[2]) };
}
