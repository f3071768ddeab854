// What a call's lifecycle needs besides the call, in a file of its own: call-lifecycle.ts
// (the call's moves) and webhook-sender.ts (the post-call webhook it ends with) both take it,
// and neither should have to import the other for it.
import type { Logger } from '../log/logger.js';
import type { Clock } from '../time/clock.js';
import type { PlanSettings } from './call-plan.js';
import type { ConversationSettings } from './conversations.js';
import type { SimState } from './state.js';

/** What the lifecycle needs besides the state. */
export interface LifecycleDeps {
  state: SimState;
  clock: Clock;
  networkClock: Clock;
  plan: PlanSettings;
  conversations: ConversationSettings;
  origin: () => string;
  webhookTimeoutMs: number;
  logger: Logger;
}
