// Which accounts at the service this daemon knows. With `accounts:` in the daemon file, each
// is named there; without it, the api: block is the one account, named "default", exactly as
// before accounts existed (its token from api.token_file or CAMPAIGND_API_TOKEN).
import type { AccountConfig, CampaignConfig, DaemonConfig } from './types.js';

/** The name of the one account a daemon file without `accounts:` has. */
export const DEFAULT_ACCOUNT = 'default';

/** Every account of the daemon, in file order (one, "default", without `accounts:`). */
export function daemonAccounts(daemon: DaemonConfig): AccountConfig[] {
  if (daemon.accounts && daemon.accounts.length > 0) return daemon.accounts;
  const only: AccountConfig = { name: DEFAULT_ACCOUNT, rateLimit: daemon.api.rateLimit };
  if (daemon.api.tokenFile !== undefined) only.tokenFile = daemon.api.tokenFile;
  if (daemon.maxCallsInParallel !== undefined) only.maxCallsInParallel = daemon.maxCallsInParallel;
  return [only];
}

/** The account a campaign dials under: the one it names, else the daemon's first (the only one, once the config is checked). */
export function campaignAccount(campaign: Pick<CampaignConfig, 'account'>, accounts: readonly Pick<AccountConfig, 'name'>[]): string {
  return campaign.account ?? accounts[0]?.name ?? DEFAULT_ACCOUNT;
}
