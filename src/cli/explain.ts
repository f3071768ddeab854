import { explainNumber, type ExplainedCallback, type Explanation } from '../explain/explain.js';
import { pidAlive } from '../lifecycle/daemon-row.js';
import { systemClock } from '../time/clock.js';
import { parseCommandArgs } from './args.js';
import { EXIT, CliError, type CliIo } from './io.js';
import { openReadStore } from './open-store.js';
import { commandNumberReader } from '../leads/typed-number.js';

export const EXPLAIN_HELP = `Usage: campaignd explain PHONE_NUMBER [--country CC] [--config FILE] [--json]

Why each lead with this number (primary or secondary) is or is not being called right
now, and when it next can be: window, retries, live-call limit, another live call to
the number, suppression, invalid number, campaign state, daemon or token problems.
Reads the database only; works while the daemon runs and while it is down.

  --country CC   read a national-format PHONE_NUMBER in this country (e.g. DE); without
                 it, in the default_country of the campaigns
  --config FILE  daemon config (default: $CAMPAIGND_CONFIG, then ./config/campaignd.yaml);
                 only its "database" is used ($CAMPAIGND_DATABASE overrides)
  --json         one JSON document on stdout
  -h, --help     this help
`;

/** `campaignd explain PHONE_NUMBER`. */
export async function explainCommand(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandArgs({
    args,
    allowPositionals: true,
    options: { config: { type: 'string' }, json: { type: 'boolean' }, country: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    strict: true,
  }, EXPLAIN_HELP);
  if (values.help) {
    io.stdout.write(EXPLAIN_HELP);
    return EXIT.ok;
  }
  if (positionals.length !== 1) throw new CliError('expected one PHONE_NUMBER (see --help)', EXIT.usage);
  const raw = positionals[0] as string;
  const store = await openReadStore(values.config, io);
  try {
    // A national number is read in the campaigns' default_country unless --country says otherwise.
    const parsed = (await commandNumberReader(store.db, values.country))(raw);
    if (!parsed.ok) throw new CliError(`"${raw}" is not a phone number campaignd can read: ${parsed.reason}`, EXIT.usage);
    const result = await explainNumber(store.db, parsed.e164, systemClock.now(), pidAlive);
    if (values.json) io.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    else io.stdout.write(render(result));
    return result.leads.length > 0 ? EXIT.ok : EXIT.problems;
  } finally {
    await store.close();
  }
}

/** `callback asked in call #12: "tomorrow at 7 am" (Europe/Berlin) for 2026-01-06T07:00:00+01:00, scheduled 2026-01-06T09:00:00+01:00 (outside the campaign window); placed in call #15` */
function callbackLine(c: ExplainedCallback): string {
  const head = `callback asked in call #${c.attempt_id}: ${JSON.stringify(c.asked)}${c.zone ? ` (${c.zone})` : ''}`;
  const at = c.asked_at ? ` for ${c.asked_at}` : '';
  if (c.state === 'refused') return `${head}${at}: not scheduled, ${c.refused_reason}`;
  const moved = c.moved_reason ? `, scheduled ${c.scheduled_at} (${c.moved_reason})` : ', scheduled then';
  const placed = c.state === 'placed' ? `; placed in call #${c.callback_attempt_id}` : '';
  const dropped = c.state === 'dropped' ? `; dropped, ${c.dropped_reason}` : '';
  return `${head}${at}${moved}${placed}${dropped}`;
}

function render(x: Explanation): string {
  if (x.leads.length === 0) return `${x.phone_number}: no lead with this number in any campaign\n`;
  const out: string[] = [];
  for (const lead of x.leads) {
    out.push(`${x.phone_number} in campaign "${lead.campaign}" (lead ${lead.lead_id}): ${lead.state}`);
    out.push(`  why: ${lead.message}`);
    if (lead.next_call_at) out.push(`  next possible call: ${lead.next_call_at}`);
    if (lead.contacts.length > 1) out.push(`  contacts: ${lead.contacts.map((c, i) => (i === lead.contact_position ? `[${c}]` : c)).join(' → ')}`);
    if (lead.attempts.length === 0) out.push('  attempts: none yet');
    else {
      out.push(`  attempts (${lead.attempts.length}):`);
      for (const a of lead.attempts) {
        const result = a.outcome ?? a.state;
        out.push(`    #${a.id} ${a.created_at} ${a.phone_number} ${result}${a.call_status ? ` (${a.call_status})` : ''}${a.detail ? ` — ${a.detail}` : ''}`);
      }
    }
    for (const c of lead.callbacks) out.push(`  ${callbackLine(c)}`);
    out.push('');
  }
  if (!x.daemon_running) out.push('note: no daemon is running on this database right now');
  return `${out.join('\n')}\n`;
}
