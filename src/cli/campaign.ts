import { parseArgs } from 'node:util';
import { loadConfig } from '../config/load.js';
import { readToken } from '../config/token.js';
import { silentLogger } from '../log/logger.js';
import { createServiceClient } from '../service/client.js';
import { getCampaignByName, listCampaigns, setCampaignState, upsertCampaign } from '../store/campaigns.js';
import { openConfiguredStore } from '../store/open-store.js';
import { recordEvent } from '../store/events.js';
import { migrateToLatest } from '../store/migrate.js';
import type { CampaignState } from '../store/types.js';
import { systemClock } from '../time/clock.js';
import { resolveConfigPath } from './config-path.js';
import { CliError, EXIT, type CliIo } from './io.js';

export const CAMPAIGN_HELP = `Usage: campaignd campaign start|stop|pause|resume NAME [--config FILE]

Changes a campaign's state in the database; a running daemon picks it up within a second.

  start, resume   dial again (start also reopens a completed campaign)
  pause           place no new calls; live calls finish and are followed to their outcome
  stop            like pause, and a linked service campaign (leads.remote_campaign_id)
                  is stopped too (start sends "start" to it)
`;

const ACTIONS: Record<string, CampaignState> = { start: 'running', resume: 'running', pause: 'paused', stop: 'stopped' };

/** `campaignd campaign start|stop|pause|resume NAME`. */
export async function campaignCommand(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { config: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    strict: true,
  });
  if (values.help) {
    io.stdout.write(CAMPAIGN_HELP);
    return EXIT.ok;
  }
  const [action, name, ...extra] = positionals;
  if (!action || !(action in ACTIONS) || !name || extra.length > 0) {
    throw new CliError('expected: campaign start|stop|pause|resume NAME (see --help)', EXIT.usage);
  }
  const target = ACTIONS[action] as CampaignState;
  const config = await loadConfig(resolveConfigPath(values.config, io), io.env, { cwd: io.cwd });
  const store = await openConfiguredStore(config.daemon, io.env);
  try {
    await migrateToLatest(store.db, { clock: systemClock });
    const now = systemClock.now();
    let row = await getCampaignByName(store.db, name);
    const fromFile = config.campaigns.find((c) => c.name === name);
    if (!row && fromFile) row = await upsertCampaign(store.db, fromFile, { timezone: fromFile.timezone ?? null }, now);
    if (!row) {
      const known = [...new Set([...(await listCampaigns(store.db)).map((c) => c.name), ...config.campaigns.map((c) => c.name)])];
      throw new CliError(`no campaign named "${name}"${known.length ? ` (known: ${known.join(', ')})` : ''}`, EXIT.usage);
    }
    if (row.state === 'completed' && action !== 'start' && target === 'running') {
      io.stdout.write(`campaign "${name}" is completed; use "campaign start ${name}" to run it again\n`);
      return EXIT.ok;
    }
    const before = row.state;
    await setCampaignState(store.db, name, target, now);
    await recordEvent(store.db, { at: now, campaignId: row.id, kind: 'state-changed', data: { from: before, to: target, by: 'cli' } });
    io.stdout.write(`campaign "${name}": ${before} → ${target}\n`);
    if (row.remote_campaign_id !== null && (action === 'start' || action === 'stop')) {
      await tellService(config, io, row.remote_campaign_id, action);
    }
    return EXIT.ok;
  } finally {
    await store.close();
  }
}

/** Sends start/stop to the linked service campaign; a failure is reported, not fatal. */
async function tellService(config: Awaited<ReturnType<typeof loadConfig>>, io: CliIo, campaignId: number, action: 'start' | 'stop'): Promise<void> {
  const { token, problem } = await readToken(config.daemon, io.env);
  if (!token) {
    io.stderr.write(`warning: service campaign ${campaignId} was not told to ${action}: ${problem}\n`);
    return;
  }
  const client = createServiceClient({ baseUrl: config.daemon.api.baseUrl, getToken: () => token, clock: systemClock, logger: silentLogger(), maxTries: 2 });
  try {
    const answer = await client.updateCampaignStatus({ campaign_id: campaignId, action });
    io.stdout.write(`service campaign ${campaignId}: ${answer.status ?? action}\n`);
  } catch (err) {
    io.stderr.write(`warning: service campaign ${campaignId} was not told to ${action}: ${err instanceof Error ? err.message : String(err)}\n`);
  } finally {
    await client.close();
  }
}
