import type { ScenarioChoice } from './conversations.js';
import type {
  FixedOutcome,
  RateLimitStats,
  SimAssistant,
  SimCall,
  SimCampaign,
  SimLead,
  SimModel,
  SimPhoneNumber,
  SimTool,
  SimUser,
  SimVoice,
  WebhookDelivery,
} from './types.js';

/**
 * Everything the simulator knows, in memory. Ids come from one counter per kind and
 * are shared by all users, so another user's record has a real id that the caller is
 * told is "not found". Tests read this object directly (it is `startSimulator().state`).
 */
export class SimState {
  readonly users: SimUser[] = [];
  readonly tools = new Map<number, SimTool>();
  readonly campaigns = new Map<number, SimCampaign>();
  readonly leads = new Map<number, SimLead>();
  readonly assistants = new Map<number, SimAssistant>();
  readonly phoneNumbers = new Map<number, SimPhoneNumber>();
  readonly voices = new Map<number, SimVoice>();
  readonly models = new Map<number, SimModel>();
  readonly calls = new Map<number, SimCall>();
  readonly webhookDeliveries: WebhookDelivery[] = [];
  /** Outcomes fixed per phone number, in the order they apply. */
  readonly fixedOutcomes = new Map<string, FixedOutcome[]>();
  /**
   * What the assistant extracts from a connected call to a number (`POST /__sim/extracted`), over
   * the post-call schema's values and the conversation's; `remaining`: for how many more such calls.
   */
  readonly extractedByNumber = new Map<string, { variables: Record<string, unknown>; remaining: number }>();
  /** The conversation each answered call to a number plays (`POST /__sim/conversations`), over the simulator's own choice. */
  readonly conversationByNumber = new Map<string, ScenarioChoice>();
  /** How many calls each number has had; part of the per-call random stream's key. */
  readonly callsPerNumber = new Map<string, number>();
  /** What the rate limiter did, over all users (all zero when it is off). */
  readonly rateLimitStats: RateLimitStats = { allowed: 0, trips: 0, refused: 0, injected: 0 };
  /** The limiter's counts per user (each token has its own limiter). */
  readonly rateLimitStatsByUser = new Map<number, RateLimitStats>();
  private readonly counters = new Map<string, number>();
  private readonly inFlight = new Set<Promise<unknown>>();
  private readonly timers = new Set<() => void>();
  private stopped = false;

  /** Next id for a kind of record (ids start at `start` and never repeat). */
  nextId(kind: string, start = 1): number {
    const next = (this.counters.get(kind) ?? start - 1) + 1;
    this.counters.set(kind, next);
    return next;
  }

  /** The user a bearer token belongs to, if the token is known and valid. */
  userByToken(token: string): SimUser | undefined {
    return this.users.find((u) => u.token === token && u.tokenValid);
  }

  /** A record of `map` only if it belongs to `userId` (another user's is "not found"). */
  owned<T extends { userId: number }>(map: Map<number, T>, id: number, userId: number): T | undefined {
    const rec = map.get(id);
    return rec && rec.userId === userId ? rec : undefined;
  }

  /** All records of `map` that belong to `userId`, by id. */
  allOf<T extends { userId: number; id: number }>(map: Map<number, T>, userId: number): T[] {
    return [...map.values()].filter((r) => r.userId === userId).sort((a, b) => a.id - b.id);
  }

  /** Voices a user may use: public ones and their own. */
  voicesFor(userId: number): SimVoice[] {
    return [...this.voices.values()].filter((v) => v.ownerId === null || v.ownerId === userId);
  }

  /** Whether an assistant holds this phone number. */
  isAssigned(phoneNumberId: number): boolean {
    for (const a of this.assistants.values()) {
      if (a.fields.phone_number_id === phoneNumberId && a.fields.deleted_at === null) return true;
    }
    return false;
  }

  /** Schedules `fn` on `clock` so that `stop()` can cancel it; nothing runs after stop. */
  schedule(clock: { setTimer(ms: number, fn: () => void): () => void }, ms: number, fn: () => void): void {
    if (this.stopped) return;
    const cancel = clock.setTimer(ms, () => {
      this.timers.delete(cancel);
      if (!this.stopped) fn();
    });
    this.timers.add(cancel);
  }

  /** Cancels every scheduled call move; used when the simulator closes. */
  stop(): void {
    this.stopped = true;
    for (const cancel of this.timers) cancel();
    this.timers.clear();
  }

  /** Keeps a background job (webhook delivery) so that `settled()` can wait for it. */
  track(job: Promise<unknown>): void {
    this.inFlight.add(job);
    void job.finally(() => this.inFlight.delete(job));
  }

  /** Resolves once every background job started so far (and any it starts) is done. */
  async settled(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }
}
