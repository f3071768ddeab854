// The fake's calls: created by make_call, moved initiated → ringing → (in-progress →) a
// final status on real-time timers, each with a post-call webhook to the assistant's
// webhook_url when it ends. Every call is kept with its timeline: that record, not the
// daemon's database, is what the black-box tests judge.
import { between, pick, stream } from './prng.mjs';
import { wallClock } from './server-time.mjs';

const CONNECTED = new Set(['human', 'machine']);

/**
 * Outcome and timings of the `nth` call (0-based) to `phone`: a pure function of the seed,
 * so a rerun with the same seed gives every number the same story.
 */
export function planCall(opts, phone, nth) {
  const rand = stream(opts.seed, 'call', phone, nth);
  const outcome = pick(rand, opts.outcomes);
  const connected = CONNECTED.has(outcome);
  return {
    outcome,
    initiatedMs: between(rand, 20, 120),
    ringMs: between(rand, opts.ringMs[0], opts.ringMs[1]),
    talkMs: connected ? between(rand, opts.talkMs[0], opts.talkMs[1]) : 0,
    // A connected call ends by the customer hanging up or the conversation completing.
    finalStatus: connected ? (rand() < 0.5 ? 'completed' : 'ended_by_customer') : outcome,
    answeredBy: connected ? outcome : null,
    webhookDelayMs: between(rand, 0, 200),
  };
}

/** The call store with its timers; `deliver(call)` is asked to send the webhook. */
export function createCalls(opts, deliver) {
  const calls = [];
  const perNumber = new Map();
  const timers = new Set();
  const ids = stream(opts.seed, 'ids');
  const usedIds = new Set();

  // Ids are numeric strings in no particular order (so sorting by id is not sorting by time).
  function newId() {
    for (;;) {
      const id = String(between(ids, 100_000, 9_999_999));
      if (!usedIds.has(id)) {
        usedIds.add(id);
        return id;
      }
    }
  }

  function later(ms, fn) {
    const t = setTimeout(() => {
      timers.delete(t);
      fn();
    }, ms);
    timers.add(t);
  }

  function move(call, status, now) {
    call.status = status;
    call.updated_ms = now;
    call.timeline.push({ status, at_ms: now });
  }

  /** Creates a call now and starts its timeline. */
  function create({ phone, assistant, variables }) {
    const nth = perNumber.get(phone) ?? 0;
    perNumber.set(phone, nth + 1);
    const plan = planCall(opts, phone, nth);
    const now = Date.now();
    const call = {
      id: newId(),
      assistant_id: assistant.id,
      assistant_name: assistant.name,
      assistant_phone_number: assistant.phone,
      client_phone_number: phone,
      input_variables: variables,
      status: 'initiated',
      answered_by: null,
      duration: 0,
      created_ms: now,
      updated_ms: now,
      finished_ms: null,
      timeline: [{ status: 'initiated', at_ms: now }],
      plan,
      answer_dropped: false,
      webhook: null,
    };
    calls.push(call);
    later(plan.initiatedMs, () => {
      move(call, 'ringing', Date.now());
      later(plan.ringMs, () => {
        if (plan.talkMs === 0) return finish(call);
        call.answered_by = plan.answeredBy;
        move(call, 'in-progress', Date.now());
        later(plan.talkMs, () => finish(call));
      });
    });
    return call;
  }

  function finish(call) {
    const now = Date.now();
    call.duration = Math.round(call.plan.talkMs / 1000);
    call.finished_ms = now;
    move(call, call.plan.finalStatus, now);
    later(call.plan.webhookDelayMs, () => deliver(call));
  }

  return {
    create,
    all: () => calls,
    /** Stops every timer (at shutdown). */
    stop() {
      for (const t of timers) clearTimeout(t);
      timers.clear();
    },
  };
}

/** A call as GET /api/user/calls shows it. */
export function callRecord(call, zone) {
  const connected = call.answered_by !== null;
  return {
    id: call.id,
    assistant_name: call.assistant_name,
    campaign_name: null,
    type: 'outbound',
    duration: call.duration,
    assistant_phone_number: call.assistant_phone_number,
    client_phone_number: call.client_phone_number,
    status: call.status,
    transcript: transcript(call, zone),
    // Empty collections come out as PHP's empty array: [].
    variables: [],
    evaluation: [],
    webhook_response: call.webhook === null ? [] : call.webhook,
    carrier_cost: connected ? (0.0042 * Math.max(1, call.duration)).toFixed(4) : '0',
    total_cost: connected ? Number((0.011 * Math.max(1, call.duration)).toFixed(4)) : 0,
    answered_by: call.answered_by,
    recording_url: null,
    created_at: wallClock(zone, call.created_ms),
    updated_at: wallClock(zone, call.updated_ms),
  };
}

/** The post-call webhook payload the live service is reported to send: no answered_by. */
export function webhookPayload(call, zone) {
  return {
    id: call.id,
    customer_phone: call.client_phone_number,
    assistant_phone: call.assistant_phone_number,
    duration: call.duration,
    status: call.status,
    extracted_variables: [],
    input_variables: Object.keys(call.input_variables).length === 0 ? [] : call.input_variables,
    transcript: transcript(call, zone),
    created_at: wallClock(zone, call.created_ms),
    finished_at: wallClock(zone, call.finished_ms ?? Date.now()),
    lead: null,
    campaign: null,
  };
}

/** The transcript as an array of turns; empty for a call nobody answered. */
function transcript(call, zone) {
  if (call.answered_by === null || call.status === 'in-progress') return [];
  const at = wallClock(zone, call.timeline.find((t) => t.status === 'in-progress')?.at_ms ?? call.created_ms);
  if (call.answered_by === 'machine') {
    return [{ text: 'You have reached the voicemail of this number. Please leave a message.', type: 'message', sender: 'customer', timestamp: at }];
  }
  return [
    { text: 'Hello, this is your assistant calling.', type: 'message', sender: 'assistant', timestamp: at },
    { text: 'Hi, yes, go ahead.', type: 'message', sender: 'customer', timestamp: at },
  ];
}

/** The call as the control interface shows it to the tests (instants in ms). */
export function recordForTest(call) {
  return {
    id: call.id,
    assistant_id: call.assistant_id,
    client_phone_number: call.client_phone_number,
    status: call.status,
    answered_by: call.answered_by,
    created_at_ms: call.created_ms,
    finished_at_ms: call.finished_ms,
    planned_outcome: call.plan.outcome,
    answer_dropped: call.answer_dropped,
    webhook: call.webhook,
    timeline: call.timeline,
  };
}
