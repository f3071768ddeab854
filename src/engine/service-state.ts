import type { Logger } from '../log/logger.js';
import type { ApiStatus } from '../store/types.js';
import { errText, type EngineStatus } from './engine-types.js';
import type { EngineClient } from './ports.js';

// What the engine knows of the service itself: whether the token works (dialing stops
// while it is rejected) and each assistant's maximum call duration (the poller's stuck rule).

const TOKEN_REJECTED = 'the service refuses it (401, 403, a redirect or an HTML page)';

export interface ServiceState {
  status(): EngineStatus;
  set(status: ApiStatus, detail: string | null): void;
  tokenRejected(): boolean;
  /** The assistant's max_call_duration when the service told it. */
  maxDuration(assistantId: number): number | null;
  /** Lists the assistants (their maximum durations); a rejected token is noted. */
  loadAssistants(): Promise<void>;
  /** Asks the service whether the token works; true when it does. */
  probe(): Promise<boolean>;
  /** The make_call answer showed the token rejected. */
  tokenRefused(): void;
}

export function createServiceState(client: EngineClient, log: Logger): ServiceState {
  let api: EngineStatus = { api: 'unknown', apiDetail: null };
  const maxDurations = new Map<number, number | null>();

  function set(status: ApiStatus, detail: string | null): void {
    if (api.api === status && api.apiDetail === detail) return;
    api = { api: status, apiDetail: detail };
    if (status === 'token-rejected') log.error('dialing stopped: the service refuses the API token; `campaignd status` says how to replace it (checked again every 30 s)');
    else log.info({ api: status }, 'service status changed');
  }

  return {
    status: () => api,
    set,
    tokenRejected: () => api.api === 'token-rejected',
    maxDuration: (id) => maxDurations.get(id) ?? null,
    tokenRefused: () => set('token-rejected', TOKEN_REJECTED),
    async loadAssistants() {
      try {
        for (const a of await client.assistants()) maxDurations.set(a.id, a.maxDurationSeconds);
        set('ok', null);
      } catch (err) {
        const kind = (err as { kind?: string }).kind;
        if (kind === 'token-rejected') set('token-rejected', TOKEN_REJECTED);
        else log.warn({ err: errText(err) }, 'could not list assistants; using default maximum call duration');
      }
    },
    async probe() {
      try {
        await client.probe();
        set('ok', null);
        return true;
      } catch (err) {
        const kind = (err as { kind?: string }).kind;
        if (kind === 'token-rejected') set('token-rejected', TOKEN_REJECTED);
        else set('unreachable', errText(err));
        return false;
      }
    },
  };
}
