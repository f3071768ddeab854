import type { LoadedConfig } from '../config/types.js';
import { readToken } from '../config/token.js';
import { silentLogger } from '../log/logger.js';
import { createServiceClient } from '../service/client.js';
import { getCampaignByName, listCampaigns, setCampaignState, upsertCampaign } from '../store/campaigns.js';
import { recordEvent } from '../store/events.js';
import type { CampaignState } from '../store/types.js';
import { systemClock } from '../time/clock.js';
import { parseCommandArgs } from './args.js';
import { loadCommandConfig } from './command-config.js';
import { CliError, EXIT, type CliIo } from './io.js';
import { openWriteStore } from './open-store.js';

export const CAMPAIGN_HELP = `Usage: campaignd campaign start|stop|pause|resume NAME [--config FILE] [--json]

Changes a campaign's state in the database; a running daemon picks it up within a second.
A campaign already in the state asked for is left as it is (exit 0).

  start, resume   dial again (start also reopens a completed campaign)
  pause           place no new calls; live calls finish and are followed to their outcome
  stop            like pause, and a linked service campaign (leads.remote_campaign_id)
                  is stopped too (start sends "start" to it)

Options:
  --config FILE   daemon config (default: $CAMPAIGND_CONFIG, then ./config/campaignd.yaml)
  --json          the change as one JSON document: campaign, from, to, changed
  -h, --help      this help

Exit status: 0 done (or nothing to do); 1 the database cannot be opened; 2 bad usage,
unknown NAME or unreadable config; 3 the database is newer than this campaignd.
`;

const ACTIONS: Record<string, CampaignState> = { start: 'running', resume: 'running', pause: 'paused', stop: 'stopped' };

/** `campaignd campaign start|stop|pause|resume NAME`. */
export async function campaignCommand(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandArgs(
    { args, allowPositionals: true, options: { config: { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } } },
    CAMPAIGN_HELP,
  );
  if (values.help) {
    io.stdout.write(CAMPAIGN_HELP);
    return EXIT.ok;
  }
  const [action, name, ...extra] = positionals;
  if (!action || !(action in ACTIONS) || !name || extra.length > 0) {
    throw new CliError('expected: campaign start|stop|pause|resume NAME (see --help)', EXIT.usage);
  }
  const target = ACTIONS[action] as CampaignState;
  const config = await loadCommandConfig(values.config, io);
  const store = await openWriteStore(config.daemon, io);
  const say = (change: { from: CampaignState; to: CampaignState; changed: boolean }, text: string): void => {
    io.stdout.write(values.json ? `${JSON.stringify({ campaign: name, ...change })}\n` : `${text}\n`);
  };
  try {
    const now = systemClock.now();
    let row = await getCampaignByName(store.db, name);
    const fromFile = config.campaigns.find((c) => c.name === name);
    if (!row && fromFile) row = await upsertCampaign(store.db, fromFile, { timezone: fromFile.timezone ?? null }, now);
    if (!row) {
      const known = [...new Set([...(await listCampaigns(store.db)).map((c) => c.name), ...config.campaigns.map((c) => c.name)])];
      throw new CliError(`no campaign named "${name}"${known.length ? ` (known: ${known.join(', ')})` : ''}`, EXIT.usage);
    }
    const before = row.state;
    if (before === 'completed' && action !== 'start' && target === 'running') {
      say({ from: before, to: before, changed: false }, `campaign "${name}" is completed; use "campaign start ${name}" to run it again`);
      return EXIT.ok;
    }
    if (before === target) {
      say({ from: before, to: target, changed: false }, `campaign "${name}" is already ${target}: nothing to do`);
    } else {
      await setCampaignState(store.db, name, target, now);
      await recordEvent(store.db, { at: now, campaignId: row.id, kind: 'state-changed', data: { from: before, to: target, by: 'cli' } });
      say({ from: before, to: target, changed: true }, `campaign "${name}": ${before} → ${target}`);
    }
    // Sent even when the state here did not change: the service's campaign may differ from it.
    if (row.remote_campaign_id !== null && (action === 'start' || action === 'stop')) {
      await tellService(config, io, row.remote_campaign_id, action, values.json === true);
    }
    return EXIT.ok;
  } finally {
    await store.close();
  }
}

/** Sends start/stop to the linked service campaign; a failure is reported, not fatal. */
async function tellService(config: LoadedConfig, io: CliIo, campaignId: number, action: 'start' | 'stop', json: boolean): Promise<void> {
  const { token, problem } = await readToken(config.daemon, io.env);
  if (!token) {
    io.stderr.write(`warning: service campaign ${campaignId} was not told to ${action}: ${problem}\n`);
    return;
  }
  const client = createServiceClient({ baseUrl: config.daemon.api.baseUrl, getToken: () => token, clock: systemClock, logger: silentLogger(), maxTries: 2 });
  try {
    const answer = await client.updateCampaignStatus({ campaign_id: campaignId, action });
    // With --json stdout holds the one document; this goes to stderr then.
    (json ? io.stderr : io.stdout).write(`service campaign ${campaignId}: ${answer.status ?? action}\n`);
  } catch (err) {
    io.stderr.write(`warning: service campaign ${campaignId} was not told to ${action}: ${err instanceof Error ? err.message : String(err)}\n`);
  } finally {
    await client.close();
  }
}
