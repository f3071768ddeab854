
import { EXIT, isCliError, processIo, type CliIo } from './cli/io.js';
import { version } from './version.js';

type Command = (args: string[], io: CliIo) => Promise<number>;

// Commands load lazily so that `status` does not pay for the simulator, and so on.
const COMMANDS: Record<string, { summary: string; load: () => Promise<Command> }> = {
  run: { summary: 'the daemon: load config, migrate the database, dial until stopped', load: async () => (await import('./cli/run.js')).runCommand },
  status: { summary: 'progress of every campaign, read from the database', load: async () => (await import('./cli/status.js')).statusCommand },
  validate: { summary: 'check the daemon config, every campaign file and every lead file', load: async () => (await import('./cli/validate.js')).validateCommand },
  explain: { summary: 'why a phone number is or is not being called right now', load: async () => (await import('./cli/explain.js')).explainCommand },
  campaign: { summary: 'start | stop | pause | resume a campaign', load: async () => (await import('./cli/campaign.js')).campaignCommand },
  suppress: { summary: 'add | remove | list | import the do-not-call list (all campaigns)', load: async () => (await import('./cli/suppress.js')).suppressCommand },
  leads: { summary: 'leads import FILE --campaign NAME: load a CSV into the store', load: async () => (await import('./cli/leads.js')).leadsCommand },
  simulator: { summary: 'serve the Voice Assistant Calling Service simulator', load: async () => (await import('./cli/simulator.js')).simulatorCommand },
  demo: { summary: 'run the simulator and the daemon on the bundled example, with live status', load: async () => (await import('./cli/demo.js')).demoCommand },
  results: { summary: 'what the calls produced, one record per lead, as CSV or JSONL', load: async () => (await import('./cli/results.js')).resultsCommand },
  store: { summary: 'store copy --from FILE --to postgres://…: move a store to another database', load: async () => (await import('./cli/store.js')).storeCommand },
  forget: { summary: "erase a phone number's personal data from the store (and stop calling it)", load: async () => (await import('./cli/forget.js')).forgetCommand },
  'api-key': { summary: 'create | list | revoke the keys of the HTTP API (/api/v1)', load: async () => (await import('./cli/api-key.js')).apiKeyCommand },
};

/** Every command's name, in the order of the help. */
export const COMMAND_NAMES = Object.keys(COMMANDS);

export const HELP = `campaignd: outbound call campaigns through the Voice Assistant Calling Service

Usage: campaignd <command> [options]

Commands:
${Object.entries(COMMANDS)
  .map(([name, c]) => `  ${name.padEnd(10)} ${c.summary}`)
  .join('\n')}

Every command takes --help. --config defaults to $CAMPAIGND_CONFIG, then ./config/campaignd.yaml.
`;

/** argv (without node and script) → exit code. Never throws. */
export async function main(argv: string[], io: CliIo = processIo()): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    io.stdout.write(HELP);
    return name ? EXIT.ok : EXIT.usage;
  }
  if (name === '--version' || name === '-v') {
    io.stdout.write(`${await version()}\n`);
    return EXIT.ok;
  }
  const command = COMMANDS[name];
  if (!command) {
    io.stderr.write(`campaignd: unknown command "${name}". Run "campaignd --help" for the list.\n`);
    return EXIT.usage;
  }
  try {
    return await (await command.load())(rest, io);
  } catch (err) {
    if (isCliError(err)) {
      io.stderr.write(`campaignd ${name}: ${err.message}\n`);
      return err.exitCode;
    }
    io.stderr.write(`campaignd ${name}: unexpected error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    return EXIT.problems;
  }
}
