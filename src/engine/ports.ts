// What the engine needs from the outside world, as narrow interfaces: the service client
// satisfies them structurally, and so can a test double for the rare thing that cannot
// run here.

import type { ErrorKind as ServiceErrorKind } from '../service/errors.js';
import type { GivenCall } from '../results/given.js';

export type { ServiceErrorKind };

/** The fields of a service error the engine decides on: kinds, never message text. */
export interface ClassifiedError {
  kind: ServiceErrorKind;
  status?: number;
  retryAfterMs?: number;
  fieldErrors?: Record<string, string[]>;
  mayHaveBeenPlaced?: boolean;
}

/** Reads the classification of a thrown value; anything unclassified counts as a network error. */
export function classifyError(err: unknown): ClassifiedError {
  if (err && typeof err === 'object' && 'kind' in err && typeof (err as { kind: unknown }).kind === 'string') {
    return err as ClassifiedError;
  }
  return { kind: 'network', mayHaveBeenPlaced: true };
}

/** One call as the engine needs it from the call list or a webhook. */
export interface CallSummary {
  id: string;
  clientPhoneNumber: string;
  status: string;
  answeredBy: string | null | undefined;
  /** Epoch ms, or null when the service's timestamp could not be read. */
  createdAt: number | null;
  /** The call's results as sent (transcript, recording, extracted variables…), kept once it ended. */
  given?: GivenCall;
}

export interface MakeCallRequest {
  phone_number: string;
  assistant_id: number;
  variables?: Record<string, unknown>;
}

export interface EngineClient {
  /**
   * Sends make_call once. `canSend` is asked after the rate budget granted the request
   * and right before it goes out: false means "not sent" (rule 1 is judged at send time).
   */
  makeCall(req: MakeCallRequest, opts?: { canSend?: () => boolean }): Promise<{ callId: string | null; sent?: boolean }>;
  /** The calls of an assistant since a server-zone date, page by page. */
  listCallsSince(assistantId: number, dateFrom: string, onPage: (calls: CallSummary[]) => boolean | void): Promise<void>;
  /** A cheap authenticated request, to learn whether the token works again. */
  probe(): Promise<void>;
  /** Outbound assistants with their zone and maximum call duration when known. */
  assistants(): Promise<{ id: number; timezone: string | null; maxDurationSeconds: number | null; type: string }[]>;
  /** The service campaign's status, for campaigns linked by remote_campaign_id. */
  remoteCampaignStatuses?(): Promise<Map<number, string>>;
  updateRemoteCampaign?(campaignId: number, action: 'start' | 'stop'): Promise<void>;
  /** Requests that could start now under the rate budget, less the make_calls waiting (polling spends what dialing leaves). */
  budgetHeadroom?(): number;
}
