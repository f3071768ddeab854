// What the demo's people said and what campaignd did with it, in a few lines for the demo's
// end: the conversations the simulator played (its own record of each call), the leads the
// demo campaign's on_result rules moved to the follow-up campaign, and the wrong numbers.
import type { SimCall } from '../simulator/types.js';
import type { StatusReport } from '../status/types.js';

/** The campaigns of the bundled example config the story is about. */
export const DEMO_CAMPAIGN = 'demo';
export const FOLLOW_UP_CAMPAIGN = 'follow-up';

/** The simulator's conversation shares in the demo: every scenario but the callbacks, which the demo asks for itself (they would be due days later). */
export const DEMO_CONVERSATION_MIX = { 'callback-en': 0, 'callback-de': 0, interested: 0.35, 'not-interested': 0.45, 'wrong-number': 0.2 };

/** The lines that say what happened, for a finished demo. */
export function demoStory(report: StatusReport, calls: Iterable<SimCall>): string[] {
  const said = new Map<string, number>();
  for (const call of calls) {
    const scenario = call.finishedAt !== null && call.answered_by === 'human' ? call.conversation?.scenario : undefined;
    if (scenario) said.set(scenario, (said.get(scenario) ?? 0) + 1);
  }
  const count = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;
  const answered = [...said.values()].reduce((a, b) => a + b, 0);
  const callbacks = (said.get('callback-en') ?? 0) + (said.get('callback-de') ?? 0);
  const lines = [
    `in ${count(answered, 'call')} a person answered (the simulator's conversations): ${said.get('interested') ?? 0} interested, ` +
      `${said.get('not-interested') ?? 0} not interested, ${count(said.get('wrong-number') ?? 0, 'wrong number')}` +
      `${callbacks > 0 ? `, ${count(callbacks, 'callback asked for', 'callbacks asked for')}` : ''}.`,
  ];
  const demo = report.campaigns.find((c) => c.name === DEMO_CAMPAIGN);
  const followUp = report.campaigns.find((c) => c.name === FOLLOW_UP_CAMPAIGN);
  if (demo && followUp) {
    lines.push(
      `${count(demo.leads.moved, 'lead')} moved to ${FOLLOW_UP_CAMPAIGN} (on_result move_to: interest "yes"), where ${count(followUp.leads.completed, 'lead')} of ${followUp.leads.total} ` +
        `(${demo.leads.moved} moved, the rest its own) ${followUp.leads.completed === 1 ? 'was' : 'were'} reached; ${count(demo.leads.invalid, 'lead')} invalid (wrong numbers by on_result, bad rows).`,
    );
  }
  return lines;
}
