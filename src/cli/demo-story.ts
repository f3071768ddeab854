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

/**
 * The demo's callback: this person (a lead of config/leads/demo.csv, in Berlin by the number)
 * answers the first call, asks to be called back in five minutes (seconds of the demo's time),
 * and is interested when called back, so they then move to the follow-up campaign.
 */
export const DEMO_CALLBACK = { phone: '+4915102000001', asks: 'in 5 minutes', zone: 'Europe/Berlin' };

/** Sets the demo's callback up through the simulator's test controls. */
export async function askForDemoCallback(simUrl: string): Promise<void> {
  const control = async (pathname: string, body: unknown): Promise<void> => {
    const res = await fetch(`${simUrl}${pathname}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    if (!res.ok) throw new Error(`the simulator refused ${pathname}: ${res.status} ${await res.text()}`);
  };
  const phone_number = DEMO_CALLBACK.phone;
  await control('/__sim/outcomes', { phone_number, status: 'completed', answered_by: 'human', duration: 30, count: 2 });
  await control('/__sim/extracted', { phone_number, variables: { interest: 'callback', callback_at: DEMO_CALLBACK.asks }, count: 1 });
  await control('/__sim/conversations', { phone_number, scenario: 'interested' });
}

/** The lines that say what happened, for a finished demo. */
export function demoStory(report: StatusReport, callsSeen: Iterable<SimCall>): string[] {
  const calls = [...callsSeen];
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
  lines.push(callbackLine(calls));
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

/** What became of the demo's callback, from the simulator's record of the calls to that person. */
function callbackLine(calls: SimCall[]): string {
  const own = calls.filter((c) => c.client_phone_number === DEMO_CALLBACK.phone).sort((a, b) => a.createdAt - b.createdAt);
  const askedIn = own.findIndex((c) => c.variables.callback_at === DEMO_CALLBACK.asks);
  const asked = own[askedIn];
  if (!asked || asked.finishedAt === null) return `no callback asked: ${DEMO_CALLBACK.phone} was not reached.`;
  const at = (t: number) => new Intl.DateTimeFormat('en-GB', { timeZone: DEMO_CALLBACK.zone, weekday: 'short', hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' }).format(t);
  const head = `1 callback: ${DEMO_CALLBACK.phone} asked at ${at(asked.finishedAt)} to be called back "${DEMO_CALLBACK.asks}" (callbacks: { variable: callback_at })`;
  const back = own[askedIn + 1];
  return back ? `${head}, called back at ${at(back.createdAt)} (${DEMO_CALLBACK.zone}).` : `${head}, not called back.`;
}
