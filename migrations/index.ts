import type { Kysely } from 'kysely';
import * as m0001 from './0001_initial.js';
import * as m0002 from './0002_status_counts.js';
import * as m0003 from './0003_provisional_index.js';
import * as m0004 from './0004_call_results.js';
import * as m0005 from './0005_phone_attempt_times.js';
import * as m0006 from './0006_daemon_api_counters.js';
import * as m0007 from './0007_hooks.js';
import * as m0008 from './0008_ha_lease.js';
import * as m0009 from './0009_primary_not_in_contacts.js';
import * as m0010 from './0010_counter_lock_order.js';
import * as m0011 from './0011_daemon_max_calls.js';
import * as m0012 from './0012_daemon_token_source.js';
import * as m0013 from './0013_dashboard_sessions.js';
import * as m0014 from './0014_api_keys.js';
import * as m0015 from './0015_lead_external_id.js';
import * as m0016 from './0016_lead_cancelled.js';
import * as m0018 from './0018_variants.js';
import * as m0019 from './0019_on_result.js';
import * as m0020 from './0020_callbacks.js';
import * as m0022 from './0022_daemon_accounts.js';
import * as m0023 from './0023_account_leases.js';
import * as m0026 from './0026_callbacks_dropped.js';
import * as m0027 from './0027_daemon_dialing_mode.js';
import * as m0028 from './0028_campaign_spend.js';
import * as m0030 from './0030_account_lease_requests.js';
import * as m0031 from './0031_variant_counts.js';
import * as m0034 from './0034_webhook_inbox.js';
import * as m0036 from './0036_fence_key_share.js';
import * as m0037 from './0037_lead_count_slots.js';
import * as m0038 from './0038_partial_lead_indexes.js';
import * as m0035 from './0035_variant_successes.js';

/** One schema step. Frozen once shipped: fix forward with a new migration. */
export interface Migration {
  up(db: Kysely<any>): Promise<void>;
  down(db: Kysely<any>): Promise<void>;
}

// Listed statically (no directory scan) so that the bundle and the compiled build see
// exactly the same set. Keys sort in the order they apply: zero-padded number first.
export const migrations: Record<string, Migration> = {
  '0001_initial': m0001,
  '0002_status_counts': m0002,
  '0003_provisional_index': m0003,
  '0004_call_results': m0004,
  '0005_phone_attempt_times': m0005,
  '0006_daemon_api_counters': m0006,
  '0007_hooks': m0007,
  '0008_ha_lease': m0008,
  '0009_primary_not_in_contacts': m0009,
  '0010_counter_lock_order': m0010,
  '0011_daemon_max_calls': m0011,
  '0012_daemon_token_source': m0012,
  '0013_dashboard_sessions': m0013,
  '0014_api_keys': m0014,
  '0015_lead_external_id': m0015,
  '0016_lead_cancelled': m0016,
  '0018_variants': m0018,
  '0019_on_result': m0019,
  '0020_callbacks': m0020,
  '0022_daemon_accounts': m0022,
  '0023_account_leases': m0023,
  '0026_callbacks_dropped': m0026,
  '0027_daemon_dialing_mode': m0027,
  '0028_campaign_spend': m0028,
  '0030_account_lease_requests': m0030,
  '0031_variant_counts': m0031,
  '0034_webhook_inbox': m0034,
  '0035_variant_successes': m0035,
  '0036_fence_key_share': m0036,
  '0037_lead_count_slots': m0037,
  '0038_partial_lead_indexes': m0038,
};
