// fast-check arbitraries for property-testing turns (yours or ours).
//
// Purely random events end a turn at once (an unexpected event fails it), so a scenario is a list
// of *choices* resolved against the state the real `step` has reached: mostly plausible replies
// to the last blocking effect (from the alphabet), some random model replies, and now and then
// a fatal event, a malformed one or random JSON. Choices shrink well because they are plain data.

import fc from 'fast-check';
import { createTurn, step as coreStep } from '@turnkit/core';
import type { JsonValue, ToolCall, TurnLimitsInput, TurnState } from '@turnkit/core';
import { labelledEventsFor } from './alphabet.js';
import { traceFrom, type Trace } from './invariants.js';
import type { StepFunction } from './logic.js';

/** How one event is chosen from the state the turn has reached. */
export type EventChoice =
  /** A plausible event of the alphabet: the `pick`-th one that moves the turn on. */
  | { readonly kind: 'plausible'; readonly pick: number }
  /** A fatal event of the alphabet: cancel, a malformed event, a failure, an incomplete batch… */
  | { readonly kind: 'fatal'; readonly pick: number }
  /** A model reply with random calls and usage (a plausible event outside `calling_model`). */
  | { readonly kind: 'reply'; readonly calls: ReadonlyArray<readonly [tool: number, arg: number]>; readonly text: string; readonly usage: { readonly inputTokens: number; readonly outputTokens: number } | null }
  /** A known event type with a random payload. */
  | { readonly kind: 'typed'; readonly type: string; readonly payload: JsonValue }
  /** Any JSON value, or any value at all, sent as the event. */
  | { readonly kind: 'json'; readonly value: JsonValue }
  | { readonly kind: 'anything'; readonly value: unknown };

/** Limits plus the choices that drive one turn. */
export interface Scenario {
  readonly limits: TurnLimitsInput;
  readonly choices: readonly EventChoice[];
}

const TOOLS = ['search', 'read', 'clock'] as const;
const EVENT_TYPES = [
  'start', 'model_responded', 'model_failed', 'tools_completed', 'tools_parked', 'approvals_decided',
  'approval_expired', 'approved_tools_completed', 'compacted', 'output_accepted', 'output_rejected', 'cancel',
] as const;

/** Small limits that still reach every limit: iterations, loops (with an exempt tool), repairs, budgets. */
export function arbitraryLimits(): fc.Arbitrary<TurnLimitsInput> {
  return fc.record(
    {
      maxIterations: fc.integer({ min: 1, max: 4 }),
      loopThreshold: fc.constantFrom(0, 2, 3, 4),
      loopExemptTools: fc.constantFrom([], ['clock']),
      maxOutputRepairs: fc.integer({ min: 0, max: 2 }),
      // Budgets only in some runs: a tight budget ends most turns before loops and limits are reached.
      budget: fc.oneof({ weight: 3, arbitrary: fc.constant({}) }, { weight: 1, arbitrary: fc.record(
        {
          maxModelCalls: fc.integer({ min: 1, max: 8 }),
          maxToolCalls: fc.integer({ min: 1, max: 8 }),
          maxInputTokens: fc.integer({ min: 50, max: 400 }),
          maxTotalTokens: fc.integer({ min: 50, max: 500 }),
          maxCost: fc.constantFrom(0.02, 0.05, 1),
        },
        { requiredKeys: [] },
      ) }),
    },
    { requiredKeys: ['maxIterations', 'loopThreshold', 'maxOutputRepairs'] },
  );
}

/** One event choice, weighted towards plausible replies. */
export function arbitraryChoice(): fc.Arbitrary<EventChoice> {
  const pick = fc.nat({ max: 1000 });
  // fast-check's JsonValue type is wider than core's readonly one; the values are the same JSON.
  const json = fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<JsonValue>;
  return fc.oneof(
    { weight: 60, arbitrary: pick.map((p): EventChoice => ({ kind: 'plausible', pick: p })) },
    {
      weight: 8,
      arbitrary: fc
        .record({
          calls: fc.array(fc.tuple(fc.nat({ max: TOOLS.length - 1 }), fc.nat({ max: 2 })), { maxLength: 3 }),
          text: fc.constantFrom('', 'Done.', 'Let me check.'),
          usage: fc.option(fc.record({ inputTokens: fc.nat({ max: 200 }), outputTokens: fc.nat({ max: 100 }) })),
        })
        .map((r): EventChoice => ({ kind: 'reply', ...r })),
    },
    { weight: 1, arbitrary: pick.map((p): EventChoice => ({ kind: 'fatal', pick: p })) },
    {
      weight: 1,
      arbitrary: fc.record({ type: fc.constantFrom(...EVENT_TYPES), payload: json }).map((r): EventChoice => ({ kind: 'typed', type: r.type, payload: r.payload })),
    },
    { weight: 1, arbitrary: json.map((value): EventChoice => ({ kind: 'json', value })) },
    { weight: 1, arbitrary: fc.anything({ maxDepth: 3 }).map((value): EventChoice => ({ kind: 'anything', value })) },
  );
}

/** The concrete event a choice stands for in `state`. */
export function eventFromChoice(state: TurnState, choice: EventChoice): unknown {
  switch (choice.kind) {
    case 'plausible':
    case 'fatal': {
      const all = labelledEventsFor(state);
      const wanted = all.filter((e) => e.kind === (choice.kind === 'plausible' ? 'progress' : 'fatal'));
      const from = wanted.length > 0 ? wanted : all;
      return from[choice.pick % from.length]?.event;
    }
    case 'reply': {
      if (state.status !== 'calling_model') return eventFromChoice(state, { kind: 'plausible', pick: choice.calls.length + choice.text.length });
      const n = state.seenCallIds.length;
      const toolCalls: ToolCall[] = choice.calls.map(([tool, arg], i) => ({ id: `call-${n + i}`, name: TOOLS[tool % TOOLS.length] ?? 'search', input: { q: `topic ${arg}` } }));
      return { type: 'model_responded', response: choice.usage === null ? { text: choice.text, toolCalls } : { text: choice.text, toolCalls, usage: choice.usage } };
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

/** Limits plus 40–60 event choices (by default). Shown by fast-check as the concrete events. */
export function arbitraryScenario(options: { minEvents?: number; maxEvents?: number; limits?: fc.Arbitrary<TurnLimitsInput> } = {}): fc.Arbitrary<Scenario> {
  const minLength = options.minEvents ?? 40;
  const maxLength = options.maxEvents ?? 60;
  return fc
    .record({ limits: options.limits ?? arbitraryLimits(), choices: fc.array(arbitraryChoice(), { minLength, maxLength }) })
    .map((scenario): Scenario => withToString(scenario));
}

function withToString(scenario: Scenario): Scenario {
  return Object.defineProperty({ ...scenario }, fc.toStringMethod, {
    value: () => {
      const { events } = runScenario(scenario);
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

/** Drives a scenario against `step` (default: core's) from a fresh turn; returns the trace and the concrete events. */
export function runScenario(scenario: Scenario, run: StepFunction = coreStep): { trace: Trace; events: unknown[] } {
  let state = createTurn({ id: 'turn-1', limits: scenario.limits });
  const events: unknown[] = [];
  const steps: Trace['steps'][number][] = [];
  for (const choice of scenario.choices) {
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
