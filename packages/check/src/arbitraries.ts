// fast-check arbitraries for property-testing turns (yours or ours).
//
// Purely random events end a turn at once (an unexpected event fails it), so a scenario is a list
// of *choices* resolved against the state the real `step` has reached: mostly plausible replies
// to the last blocking effect (from the alphabet), some random model replies, and now and then
// a fatal event, a malformed one or random JSON. Choices shrink well because they are plain data.
// A run stops a few events after the turn has ended: those check that terminal states absorb
// events, and more of them would only pad the run.

import './peer.js';
import fc from 'fast-check';
import { createTurn, isTerminal, step as coreStep } from '@turnkit/core';
import type { JsonValue, ToolCall, TurnLimitsInput, TurnState } from '@turnkit/core';
import { freshCallId, labelledEventsFor } from './alphabet.js';
import { traceFrom, type StepTrace } from './invariants.js';
import type { StepFunction } from './logic.js';

/** How one event is chosen from the state the turn has reached. */
export type EventChoice =
  /**
   * A plausible reply to the state's last blocking effect, drawn by `pick` with fixed weights per
   * label: the events of the alphabet that move the turn on, plus the replies that end a turn the
   * way a real one ends (an after-hook stop, a reply that busts the budget).
   */
  | { readonly kind: 'plausible'; readonly pick: number }
  /** A fatal event of the alphabet: cancel, a malformed event, a failure, an incomplete batch… */
  | { readonly kind: 'fatal'; readonly pick: number }
  /** A model reply with random calls and usage (a plausible event outside `calling_model`). */
  | {
      readonly kind: 'reply';
      readonly calls: ReadonlyArray<readonly [tool: number, arg: number]>;
      readonly text: string;
      readonly usage: { readonly inputTokens: number; readonly outputTokens: number } | null;
    }
  /** A known event type with a random payload. */
  | { readonly kind: 'typed'; readonly type: string; readonly payload: JsonValue }
  /** Any JSON value, or any value at all, sent as the event. */
  | { readonly kind: 'json'; readonly value: JsonValue }
  | { readonly kind: 'anything'; readonly value: unknown };

/** Limits plus the choices that drive one turn. */
export interface EventScenario {
  /** The turn's limits. */
  readonly limits: TurnLimitsInput;
  /** How each next event is chosen, one choice per event. */
  readonly choices: readonly EventChoice[];
  /**
   * Events still fed once the turn has ended (they check that terminal states absorb events);
   * the remaining choices are not used. Default: all of them.
   */
  readonly afterEnd?: number;
}

const TOOLS = ['search', 'read', 'clock'] as const;
const EVENT_TYPES = [
  'start',
  'model_responded',
  'model_failed',
  'tools_completed',
  'tools_parked',
  'approvals_decided',
  'approval_expired',
  'approved_tools_completed',
  'compacted',
  'output_accepted',
  'output_rejected',
  'cancel',
  'cancel_batch',
  'effect_failed',
] as const;

/**
 * Relative weights of the alphabet's labels for a `plausible` choice (labels not listed weigh 1).
 * Tuned (measured over 30 x 1,000 unseeded turns) so a turn lives for several tool rounds, and
 * every way it can end (a text answer, max_iterations, a loop, a budget, a hook stop, repairs
 * running out), approvals and repairs each occur in dozens of every 1,000 turns: a text answer
 * is about 1 in 50 plausible model replies, a hook stop about 1 in 50 replies to a dispatch.
 */
const PLAUSIBLE_WEIGHTS: Readonly<Record<string, number>> = {
  // calling_model
  reply_text: 1,
  reply_one_call: 20,
  reply_two_calls: 16,
  reply_repeated_batch: 6,
  reply_exempt_call: 6,
  reply_exempt_and_search: 6,
  reply_over_budget: 2,
  // dispatching
  tools_completed: 24,
  tools_completed_reversed: 6,
  tools_completed_override: 6,
  tools_completed_stop: 1,
  tools_parked_all: 8,
  tools_parked_last: 8,
  // awaiting_approval
  approve_all: 4,
  reject_all: 2,
  approve_first_only: 2,
  approve_first_reject_rest: 2,
  decide_unknown_id: 1,
  approval_expired: 1,
  // executing_approved
  approved_completed: 4,
  approved_completed_reversed: 2,
  decide_while_executing: 1,
  // any status with a batch in flight
  cancel_batch: 1,
  // finalizing
  output_accepted: 1,
  output_rejected: 1,
};

/** Alphabet events of kind `fatal` that a well-behaved model or tool host can send: they end a turn normally. */
const ENDING_REPLIES: ReadonlySet<string> = new Set(['tools_completed_stop', 'reply_over_budget']);

/**
 * Small limits that still reach every limit: iterations, loops (with an exempt tool), repairs,
 * budgets. Most turns get several tool rounds before `maxIterations`, so they live a while.
 */
export function arbitraryLimits(): fc.Arbitrary<TurnLimitsInput> {
  return fc.record(
    {
      maxIterations: fc.oneof(
        { weight: 1, arbitrary: fc.integer({ min: 1, max: 3 }) },
        { weight: 5, arbitrary: fc.integer({ min: 5, max: 16 }) },
      ),
      // The alphabet's replies repeat often (one search, the same two calls), so a threshold ends
      // many of its turns in a loop: half the turns have loop detection off and go on.
      loopThreshold: fc.oneof(
        { weight: 2, arbitrary: fc.constant(0) },
        { weight: 1, arbitrary: fc.constantFrom(2, 3) },
        { weight: 1, arbitrary: fc.constantFrom(5, 8) },
      ),
      loopExemptTools: fc.constantFrom([], ['clock']),
      maxOutputRepairs: fc.integer({ min: 0, max: 2 }),
      // One call per reply in some runs, so replies of two or more calls are cut.
      maxCallsPerReply: fc.constantFrom(1, 2, 32),
      // Budgets in a fifth of the runs: a budget ends most of its turns before loops and limits are reached.
      budget: fc.oneof(
        { weight: 4, arbitrary: fc.constant({}) },
        {
          weight: 1,
          arbitrary: fc.record(
            {
              maxModelCalls: fc.integer({ min: 3, max: 16 }),
              maxToolCalls: fc.integer({ min: 4, max: 24 }),
              maxInputTokens: fc.integer({ min: 200, max: 1500 }),
              maxTotalTokens: fc.integer({ min: 200, max: 2000 }),
              maxCost: fc.constantFrom(0.05, 0.1, 1),
            },
            { requiredKeys: [] },
          ),
        },
      ),
    },
    { requiredKeys: ['maxIterations', 'loopThreshold', 'maxOutputRepairs'] },
  );
}

/**
 * One event choice: mostly plausible replies, some random model replies, and about 0.8% fatal or
 * malformed events (each ends the turn: enough to hit every status, few enough that most turns
 * end on their own).
 */
export function arbitraryChoice(): fc.Arbitrary<EventChoice> {
  const pick = fc.nat({ max: 1_000_000 });
  // fast-check's JsonValue type is wider than core's readonly one; the values are the same JSON.
  const json = fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<JsonValue>;
  return fc.oneof(
    { weight: 600, arbitrary: pick.map((p): EventChoice => ({ kind: 'plausible', pick: p })) },
    {
      weight: 20,
      arbitrary: fc
        .record({
          calls: fc.array(fc.tuple(fc.nat({ max: TOOLS.length - 1 }), fc.nat({ max: 2 })), { maxLength: 3 }),
          text: fc.constantFrom('', 'Done.', 'Let me check.'),
          usage: fc.option(fc.record({ inputTokens: fc.nat({ max: 200 }), outputTokens: fc.nat({ max: 100 }) })),
        })
        .map((r): EventChoice => ({ kind: 'reply', ...r })),
    },
    { weight: 2, arbitrary: pick.map((p): EventChoice => ({ kind: 'fatal', pick: p })) },
    {
      weight: 1,
      arbitrary: fc
        .record({ type: fc.constantFrom(...EVENT_TYPES), payload: json })
        .map((r): EventChoice => ({ kind: 'typed', type: r.type, payload: r.payload })),
    },
    { weight: 1, arbitrary: json.map((value): EventChoice => ({ kind: 'json', value })) },
    { weight: 1, arbitrary: fc.anything({ maxDepth: 3 }).map((value): EventChoice => ({ kind: 'anything', value })) },
  );
}

/** The entry `pick` lands on when each entry takes `weight(entry)` slots of a wheel. */
function weightedPick<T>(entries: readonly T[], weight: (entry: T) => number, pick: number): T | undefined {
  const total = entries.reduce((sum, e) => sum + weight(e), 0);
  let slot = total > 0 ? pick % total : 0;
  for (const entry of entries) {
    slot -= weight(entry);
    if (slot < 0) return entry;
  }
  return entries[0];
}

/** The concrete event a choice stands for in `state`. */
export function eventFromChoice(state: TurnState, choice: EventChoice): unknown {
  switch (choice.kind) {
    case 'plausible': {
      const all = labelledEventsFor(state);
      const wanted = all.filter((e) => e.kind === 'progress' || ENDING_REPLIES.has(e.label));
      return weightedPick(wanted.length > 0 ? wanted : all, (e) => PLAUSIBLE_WEIGHTS[e.label] ?? 1, choice.pick)?.event;
    }
    case 'fatal': {
      const all = labelledEventsFor(state);
      const wanted = all.filter((e) => e.kind === 'fatal' && !ENDING_REPLIES.has(e.label));
      const from = wanted.length > 0 ? wanted : all;
      return from[choice.pick % from.length]?.event;
    }
    case 'reply': {
      if (state.status !== 'calling_model')
        return eventFromChoice(state, { kind: 'plausible', pick: choice.calls.length + choice.text.length });
      const toolCalls: ToolCall[] = choice.calls.map(([tool, arg], i) => ({
        id: freshCallId(state, i),
        name: TOOLS[tool % TOOLS.length] ?? 'search',
        input: { q: `topic ${arg}` },
      }));
      return {
        type: 'model_responded',
        response:
          choice.usage === null ? { text: choice.text, toolCalls } : { text: choice.text, toolCalls, usage: choice.usage },
      };
    }
    case 'typed':
      return choice.payload !== null && typeof choice.payload === 'object' && !Array.isArray(choice.payload)
        ? { ...choice.payload, type: choice.type }
        : { type: choice.type, value: choice.payload };
    case 'json':
    case 'anything':
      return choice.value;
  }
}

/**
 * An event for `state`: mostly a plausible reply to its last blocking effect, sometimes a random
 * model reply, a fatal or malformed event, or random JSON.
 *
 * @example
 * fc.assert(fc.property(arbitraryEvent(state), (event) => { step(state, event); }));
 */
export function arbitraryEvent(state: TurnState): fc.Arbitrary<unknown> {
  return arbitraryChoice().map((choice) => eventFromChoice(state, choice));
}

/**
 * Limits plus 40–60 event choices (by default), of which a run uses those up to the end of the
 * turn and `afterEnd` more (default 3: enough to check that a terminal state absorbs events
 * without padding every run with them). Shown by fast-check as the concrete events.
 */
export function arbitraryEventScenario(
  options: { minEvents?: number; maxEvents?: number; afterEnd?: number; limits?: fc.Arbitrary<TurnLimitsInput> } = {},
): fc.Arbitrary<EventScenario> {
  const minLength = options.minEvents ?? 40;
  const maxLength = options.maxEvents ?? 60;
  const afterEnd = options.afterEnd ?? 3;
  return fc
    .record({ limits: options.limits ?? arbitraryLimits(), choices: fc.array(arbitraryChoice(), { minLength, maxLength }) })
    .map((scenario): EventScenario => withToString({ ...scenario, afterEnd }));
}

function withToString(scenario: EventScenario): EventScenario {
  return Object.defineProperty({ ...scenario }, fc.toStringMethod, {
    value: () => {
      const { events } = runEventScenario(scenario);
      return `limits: ${JSON.stringify(scenario.limits)}\nevents:\n${events.map((e, i) => `  ${i}: ${safeJson(e)}`).join('\n')}`;
    },
    enumerable: false,
  });
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/**
 * Drives a scenario against `step` (default: core's) from a fresh turn, up to `afterEnd` events
 * past the end; returns the trace and the concrete events.
 */
export function runEventScenario(scenario: EventScenario, run: StepFunction = coreStep): { trace: StepTrace; events: unknown[] } {
  let state = createTurn({ id: 'turn-1', limits: scenario.limits });
  const events: unknown[] = [];
  const steps: StepTrace['steps'][number][] = [];
  let afterEnd = scenario.afterEnd ?? Number.POSITIVE_INFINITY;
  for (const choice of scenario.choices) {
    if (isTerminal(state)) {
      if (afterEnd <= 0) break;
      afterEnd -= 1;
    }
    const event = eventFromChoice(state, choice);
    events.push(event);
    const trace = traceFrom(state, [event], run);
    const recorded = trace.steps[0];
    if (recorded === undefined) break;
    steps.push(recorded);
    if (recorded.thrown !== undefined) break;
    state = recorded.next;
  }
  return { trace: { limits: createTurn({ id: 'turn-1', limits: scenario.limits }).limits, steps }, events };
}
