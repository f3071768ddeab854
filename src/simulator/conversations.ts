// What the person says when a person answers: the simulator's conversations, so that the demo,
// the tests and the benches can show what campaignd does with what the assistant extracted
// (a callback asked for in English or German, an interest, a wrong number) and what a call
// costs. A scenario is chosen per number (`POST /__sim/conversations`) or for every number
// (the `conversations` option); `mix` draws one per call by weight. Every draw comes from a
// stream keyed by the seed, the number and its call count (as call-plan.ts does), so the same
// seed plays the same conversations whatever order the calls arrive in.
import { hashSeed, mulberry32, pickWeighted, randomInt } from './random.js';

/** The conversations the simulator can play. */
export const SCENARIO_NAMES = ['callback-en', 'callback-de', 'interested', 'not-interested', 'wrong-number'] as const;
export type ScenarioName = (typeof SCENARIO_NAMES)[number];
/** A scenario, or `mix`: one drawn per call by weight. */
export type ScenarioChoice = ScenarioName | 'mix';

/** The variables the assistant extracts (the names a campaign's rules and `callbacks:` refer to). */
export const EXTRACTED = { interest: 'interest', callbackAt: 'callback_at', outcome: 'outcome' } as const;

/** Shares of `mix` unless the simulator is given others (a plausible day of outbound calls). */
export const DEFAULT_SCENARIO_MIX: Record<ScenarioName, number> = {
  'callback-en': 0.15,
  'callback-de': 0.1,
  interested: 0.3,
  'not-interested': 0.3,
  'wrong-number': 0.15,
};

/**
 * Callback phrases as people say them. Some land inside a usual calling window, some outside it
 * ("tonight at 11 pm"), some cannot be read at all ("whenever"); `{date}` is filled with a day
 * a few days after the call (ISO 8601, with and without an offset), so that those stay inside a
 * callback horizon whenever the run happens.
 */
export const CALLBACK_PHRASES: Record<'en' | 'de', readonly string[]> = {
  en: [
    'tomorrow at 3 pm',
    'in 2 hours',
    'next Monday at 10:30',
    'tomorrow at 9:15 am',
    'in 90 minutes',
    '{date}T15:00',
    '{date}T11:00+01:00',
    '{date}T16:30-05:00',
    '2026-12-01T15:00',
    '2026-12-01T15:00+01:00',
    'tonight at 11 pm',
    'tomorrow at 6 am',
    'whenever',
    'some other time',
  ],
  de: [
    'morgen um 15 Uhr',
    'übermorgen um 9:30',
    'in 2 Stunden',
    'nächsten Montag um 10:30',
    'morgen um 7 Uhr',
    'heute Abend um 23 Uhr',
    '{date}T10:00',
    'nach dem Urlaub',
    'irgendwann',
  ],
};

/** One played conversation: what was said, what the assistant extracted, how long it took. */
export interface Conversation {
  scenario: ScenarioName;
  /** The extracted variables (the webhook's `extracted_variables`, the call list's `variables`). */
  variables: Record<string, string>;
  /** The person's lines, after the assistant's greeting. */
  lines: string[];
  /** Seconds of talk: a wrong number is over quickly, an interested person talks longer (sets the cost). */
  talkSeconds: number;
}

/** Settings of the conversation model (SimulatorOptions.conversations / conversationMix). */
export interface ConversationSettings {
  seed: number;
  /** What every answered call plays unless its number has its own scenario; undefined: no conversations. */
  choice: ScenarioChoice | undefined;
  mix: Record<ScenarioName, number>;
}

/** Normalises configured shares of `mix`: unknown names are refused, missing ones keep their default. */
export function scenarioMix(custom: Partial<Record<string, number>> | undefined): Record<ScenarioName, number> {
  const mix = { ...DEFAULT_SCENARIO_MIX };
  for (const [name, share] of Object.entries(custom ?? {})) {
    if (!isScenarioName(name)) throw new RangeError(`unknown conversation scenario "${name}" (use ${SCENARIO_NAMES.join(', ')})`);
    if (typeof share !== 'number' || !(share >= 0)) throw new RangeError(`share of ${name} must be a number ≥ 0`);
    mix[name] = share;
  }
  if (Object.values(mix).every((s) => s === 0)) throw new RangeError('conversation shares must not all be 0');
  return mix;
}

export function isScenarioName(name: unknown): name is ScenarioName {
  return typeof name === 'string' && (SCENARIO_NAMES as readonly string[]).includes(name);
}

export function isScenarioChoice(name: unknown): name is ScenarioChoice {
  return name === 'mix' || isScenarioName(name);
}

/**
 * Plays the conversation of the `nthCall`-th call to `phoneNumber` (0-based), or returns null
 * when neither the number nor the simulator has a scenario. `placedAt` (ms) dates the ISO
 * phrases; `maxTalkSeconds` is the assistant's max_duration.
 */
export function playConversation(
  settings: ConversationSettings,
  phoneNumber: string,
  nthCall: number,
  numberChoice: ScenarioChoice | undefined,
  placedAt: number,
  maxTalkSeconds: number,
): Conversation | null {
  const choice = numberChoice ?? settings.choice;
  if (choice === undefined) return null;
  // A stream of its own: drawing a conversation never shifts the outcome drawn for the call.
  const rand = mulberry32(hashSeed(settings.seed, `conversation:${phoneNumber}#${nthCall}`));
  const scenario = choice === 'mix' ? pickWeighted(rand, settings.mix) : choice;
  const cap = Math.max(1, maxTalkSeconds);
  const talk = (min: number, max: number): number => Math.min(cap, randomInt(rand, min, max));
  switch (scenario) {
    case 'callback-en':
    case 'callback-de': {
      const lang = scenario === 'callback-en' ? 'en' : 'de';
      const phrases = CALLBACK_PHRASES[lang];
      const phrase = fillDate(phrases[randomInt(rand, 0, phrases.length - 1)] ?? '', placedAt, randomInt(rand, 1, 6));
      const line = lang === 'en' ? `I can't talk now. Call me back ${phrase}.` : `Ich kann gerade nicht. Rufen Sie mich ${phrase} zurück.`;
      return { scenario, variables: { [EXTRACTED.interest]: 'callback', [EXTRACTED.callbackAt]: phrase }, lines: [line], talkSeconds: talk(15, 45) };
    }
    case 'interested':
      return { scenario, variables: { [EXTRACTED.interest]: 'yes' }, lines: ['Yes, that sounds interesting.', 'Tell me more.'], talkSeconds: talk(60, 150) };
    case 'not-interested':
      return { scenario, variables: { [EXTRACTED.interest]: 'no' }, lines: ['No, thank you, not interested.'], talkSeconds: talk(20, 60) };
    case 'wrong-number':
      return { scenario, variables: { [EXTRACTED.outcome]: 'wrong number' }, lines: ['Sorry, you have the wrong number.'], talkSeconds: talk(5, 15) };
  }
}

/** Fills `{date}` with the UTC date `days` after `at` (YYYY-MM-DD). */
function fillDate(phrase: string, at: number, days: number): string {
  return phrase.replace('{date}', new Date(at + days * 86_400_000).toISOString().slice(0, 10));
}
