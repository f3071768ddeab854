import type { DaemonConfig, LoadedConfig } from '../config/types.js';
import type { Logger } from '../log/logger.js';
import type { ServiceClient } from '../service/client.js';

// `webhook.register: true`: the daemon points each campaign's assistant's post-call webhook
// at itself (the service sends webhooks to the assistant's webhook_url), at start and on
// SIGHUP, so that nobody has to set it by hand for outcomes to arrive at once instead of by
// polling. `campaignd demo` runs the daemon with it on. The secret travels in the URL's
// query (the service has no header setting); it is never logged.

export const WEBHOOK_PATH = '/webhooks/post-call';

/** The daemon's webhook address: webhook.public_url, else http.listen's host and the bound port. */
export function webhookBase(daemon: DaemonConfig, boundPort: number): string {
  if (daemon.webhook.publicUrl) return daemon.webhook.publicUrl;
  const host = daemon.http.host.includes(':') && !daemon.http.host.startsWith('[') ? `[${daemon.http.host}]` : daemon.http.host;
  return `http://${host}:${boundPort}`;
}

/** Sets webhook_url on every assistant the campaigns name; returns how many were set. Never throws: the daemon runs on by polling. */
export async function registerWebhook(opts: {
  client: Pick<ServiceClient, 'updateAssistant'>;
  config: LoadedConfig;
  boundPort: number;
  secret: string | undefined;
  logger: Logger;
}): Promise<number> {
  const { config, logger } = opts;
  const shown = `${webhookBase(config.daemon, opts.boundPort)}${WEBHOOK_PATH}`;
  if (!opts.secret) {
    logger.warn({ env: config.daemon.webhook.secretEnv }, 'webhook.register: the webhook secret is not set, so no webhook is registered');
    return 0;
  }
  const url = `${shown}?secret=${encodeURIComponent(opts.secret)}`;
  let done = 0;
  for (const assistantId of [...new Set(config.campaigns.flatMap((c) => c.variants?.map((v) => v.assistantId) ?? [c.assistantId]))].sort((a, b) => a - b)) {
    try {
      await opts.client.updateAssistant(assistantId, { is_webhook_active: true, webhook_url: url });
      logger.info({ assistant: assistantId, webhook_url: shown }, 'post-call webhook registered with the assistant');
      done++;
    } catch (err) {
      const reason = err instanceof Error ? err.message.split(opts.secret).join('***') : String(err);
      logger.warn({ assistant: assistantId, webhook_url: shown, err: reason }, 'could not register the post-call webhook with the assistant; outcomes come by polling (retried on SIGHUP)');
    }
  }
  return done;
}
