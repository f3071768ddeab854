// Command-line options of fake-service.mjs, with the defaults that make it differ from
// campaignd's own simulator (see test/blackbox/README.md).
import { parseArgs } from 'node:util';
import { checkZone } from './server-time.mjs';

const HELP = `node test/blackbox/fake-service.mjs --token T [options]
  --port N               API port (default 0: any free port)
  --control-port N       control interface port (default 0)
  --host H               listen address (default 127.0.0.1)
  --token T              the one accepted bearer token (required)
  --seed N               outcomes, ids, faults (default 1)
  --server-timezone Z    zone of the zone-less timestamps (default Pacific/Pago_Pago)
  --assistant-id N       id of the outbound assistant (default 42)
  --call-id              make_call answers with call_id (a string); default: data {} only
  --rate-limit R         "100/min" (20 per 10 s on top) or "off" (default 100/min)
  --outcomes LIST        shares, e.g. human=0.45,machine=0.15,busy=0.2,no-answer=0.1,failed=0.1
  --ring-ms A-B          ringing time (default 150-700)
  --talk-ms A-B          talk time of answered calls (default 300-1500)
  --max-per-page N       cap on per_page of the call list (default 100)
  --list-order O         page-shuffled (default) or newest`;

function range(text, name) {
  const m = /^(\d+)-(\d+)$/.exec(text);
  if (!m || Number(m[1]) > Number(m[2])) throw new Error(`--${name} must be A-B with A <= B`);
  return [Number(m[1]), Number(m[2])];
}

function shares(text) {
  const out = {};
  for (const part of text.split(',')) {
    const [k, v] = part.split('=');
    if (!['human', 'machine', 'busy', 'no-answer', 'failed'].includes(k) || !(Number(v) >= 0)) throw new Error(`--outcomes: bad entry ${part}`);
    out[k] = Number(v);
  }
  if (!Object.values(out).some((v) => v > 0)) throw new Error('--outcomes: every share is 0');
  return out;
}

/** Parsed options; throws an Error with the usage on bad input. */
export function readOptions(argv) {
  const { values } = parseArgs({
    args: argv,
    options: {
      port: { type: 'string', default: '0' },
      'control-port': { type: 'string', default: '0' },
      host: { type: 'string', default: '127.0.0.1' },
      token: { type: 'string' },
      seed: { type: 'string', default: '1' },
      'server-timezone': { type: 'string', default: 'Pacific/Pago_Pago' },
      'assistant-id': { type: 'string', default: '42' },
      'call-id': { type: 'boolean', default: false },
      'rate-limit': { type: 'string', default: '100/min' },
      outcomes: { type: 'string', default: 'human=0.45,machine=0.15,busy=0.2,no-answer=0.1,failed=0.1' },
      'ring-ms': { type: 'string', default: '150-700' },
      'talk-ms': { type: 'string', default: '300-1500' },
      'max-per-page': { type: 'string', default: '100' },
      'list-order': { type: 'string', default: 'page-shuffled' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) return { help: HELP };
  if (!values.token) throw new Error(`--token is required\n${HELP}`);
  checkZone(values['server-timezone']);
  const rl = values['rate-limit'];
  const perMinute = rl === 'off' ? null : Number(/^(\d+)\/min$/.exec(rl)?.[1] ?? NaN);
  if (perMinute !== null && !(perMinute > 0)) throw new Error('--rate-limit must be N/min or off');
  if (!['page-shuffled', 'newest'].includes(values['list-order'])) throw new Error('--list-order must be page-shuffled or newest');
  return {
    port: Number(values.port),
    controlPort: Number(values['control-port']),
    host: values.host,
    token: values.token,
    seed: values.seed,
    serverTimezone: values['server-timezone'],
    assistantId: values['assistant-id'],
    callId: values['call-id'],
    rateLimit: { perMinute, burst: 20 },
    outcomes: shares(values.outcomes),
    ringMs: range(values['ring-ms'], 'ring-ms'),
    talkMs: range(values['talk-ms'], 'talk-ms'),
    maxPerPage: Math.min(100, Math.max(1, Number(values['max-per-page']))),
    listOrder: values['list-order'],
  };
}
