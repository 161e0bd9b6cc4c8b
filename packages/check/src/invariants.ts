// The ten invariants of the turn contract (docs/turn-contract.md, "Invariants"), checked on a trace.
//
// A trace is what a driver saw: for each step the state before, the event, the state after and
// the effects. Per-step invariants (1–5, 9) look at one step; history invariants (6, 7, 8, 10)
// need what came before, so they run as a small monitor folded over the steps (history.ts).

import { errorMessage } from '@turnkit/core/internal';
import { isBlocking, isTerminal, parseTurnState, stateProblems, step as coreStep } from '@turnkit/core';
import type { Effect, TurnState } from '@turnkit/core';
import type { TurnLimits } from '@turnkit/core/internal';
import { deepEqual, deepEqualAlong } from './equal.js';
import type { StepFunction } from './logic.js';
import { initialMonitor, observeHistory, type MonitorState, type Report } from './history.js';

export { initialMonitor, type MonitorState };

export type { CheckOptions, InvariantNumber, StepTrace, TraceStep, Violation } from './trace-types.js';
import type { CheckOptions, InvariantNumber, StepTrace, TraceStep, Violation } from './trace-types.js';

/**
 * Checks every invariant of docs/turn-contract.md that a trace can show. Never throws; returns the violations in
 * step order (empty when the trace is clean).
 *
 * @example
 * const trace = runEvents({ maxIterations: 2 }, [{ type: 'start' }, { type: 'cancel' }]);
 * expect(checkInvariants(trace)).toEqual([]);
 */
export function checkInvariants(trace: StepTrace, options: CheckOptions = {}): Violation[] {
  const first = trace.steps[0];
  if (first === undefined) return [];
  const checker = new StepChecker();
  let monitor = initialMonitor(first.state);
  trace.steps.forEach((record, index) => {
    monitor = checker.check(trace.limits, record, index, monitor, options);
  });
  return checker.violations;
}

/**
 * Checks steps one after another: the violations of each step checked are appended to `violations`,
 * which the caller reads and empties. An exploration checks every edge with one checker: a list,
 * a reporting function and a result made for each edge were 220 to 250 bytes an edge of the
 * 2.9 kB an exploration allocated (maxIterations 3 with the re-runs on 1 node in 16, V8's
 * sampling heap profiler counting collected objects), 39 with it.
 */
export class StepChecker {
  violations: Violation[] = [];
  #index = 0;
  #only: readonly InvariantNumber[] | undefined = undefined;
  readonly #report: Report = (invariant, message) => {
    const only = this.#only;
    if (only === undefined || only.includes(invariant)) this.violations.push({ invariant, step: this.#index, message });
  };

  /** Checks one step given the monitor of the steps before it; returns the next monitor. */
  check(limits: TurnLimits, record: TraceStep, index: number, monitor: MonitorState, options: CheckOptions = {}): MonitorState {
    const only = options.only;
    this.#only = only;
    this.#index = index;
    const report = this.#report;
    const run = options.step ?? coreStep;
    const all = only === undefined;
    let next = monitor;
    try {
      if (all || only.includes(1)) neverThrows(record, report);
      if (options.purity !== false) purityReruns(record, run, report, all || only.includes(2), all || only.includes(3));
      if (all || only.includes(3)) stateChecks(record, report, options.stateInvariants !== false, options.parseStates !== false);
      if (all || only.includes(4)) terminalAbsorbs(record, report);
      if (all || only.includes(5)) blockingLast(record, report);
      if (all || only.includes(9)) monotone(record, report);
      next = observeHistory(limits, record, monitor, report);
    } catch (error) {
      // A checker bug (or a hostile trace) must not hide the other results.
      report(1, `checking this step threw: ${describe(error)}`);
    }
    return next;
  }
}

function describe(error: unknown): string {
  return errorMessage(error);
}

// 1. step never throws (and did not need its last-resort catch).
function neverThrows(record: TraceStep, report: Report): void {
  if (record.thrown !== undefined) report(1, `step threw: ${record.thrown}`);
  const outcome = record.next.outcome;
  if (outcome?.status === 'failed' && outcome.error.kind === 'internal_error' && record.state.outcome === null) {
    report(1, `step hit an internal error and caught it: ${outcome.error.message}`);
  }
}

// 2 and 3: the purity re-runs. 2: deterministic, no mutation, deep-frozen inputs work. 3: step
// on a JSON round trip of the state gives the same result. With core's step, one run serves both
// (`frozenRoundTripHolds`); when it does not hold, and for a reducer under test, the two re-runs
// below tell which broke. The run on unfrozen copies serves both the round trip and the mutation
// check: `step` on a JSON copy of the state (and a copy of the event), which must give the
// recorded result and leave both copies as they were (the state's parsed JSON text, and the
// event, say what they were).
function purityReruns(record: TraceStep, run: StepFunction, report: Report, deterministic: boolean, roundTrip: boolean): void {
  if (record.thrown !== undefined || (!deterministic && !roundTrip)) return;
  if (run === coreStep && deterministic && roundTrip && frozenRoundTripHolds(record, run)) return;
  if (deterministic) {
    const again = safeRun(run, frozenCopy(record.state, frozenOfState), frozenCopy(record.event, frozenOfEvent));
    if (again === null || !deepEqual(again[0], record.next) || !deepEqual(again[1], record.effects)) {
      report(
        2,
        `step on deep-frozen copies of the state and event gave a different result${again === null ? ' (it threw)' : ''}`,
      );
    }
  }
  const text = stateJson(record.state);
  const unfrozenState = JSON.parse(text) as TurnState;
  const unfrozenEvent = deepClone(record.event);
  const again = safeRun(run, unfrozenState, unfrozenEvent);
  if (roundTrip && (again === null || !deepEqual(again[0], record.next) || !deepEqual(again[1], record.effects)))
    report(3, 'step on a JSON round trip of the state gave a different result');
  if (!deterministic) return;
  if (!deepEqual(unfrozenState, parsedCopy(record.state, text))) report(2, 'step mutated the state it was given');
  if (!deepEqual(unfrozenEvent, record.event)) report(2, 'step mutated the event it was given');
}

/**
 * True when `step` on the deep-frozen JSON copy of the state, with a deep-frozen copy of the event,
 * gives the recorded result: one run that shows invariants 2 and 3 on an edge for code in strict
 * mode (every ES module is), where writing to a frozen object throws. It serves core's step
 * alone: a reducer under test may be sloppy code, where a write to a frozen object is dropped
 * without a word. The results are compared along the copies (`deepEqualAlong`): what `step` left
 * as it was in its result is the copy's own part, equal to the state's (the state's JSON text
 * parses back to it, found once per state), and is not walked. Before, core's step got the two
 * re-runs below on every edge they ran on (with the JSON copy a run left as parsed kept for the
 * next edge of the same state): `pnpm bench --check`'s maxIterations 3 with the re-runs on every
 * edge took 12.4 s on one thread before, 7.3 s after (docs/model-checking.md).
 */
export function frozenRoundTripHolds(record: TraceStep, run: StepFunction): boolean {
  let text: string;
  try {
    text = stateJson(record.state);
  } catch {
    return false;
  }
  const parsed = parsedCopy(record.state, text);
  if (!parsesBack(record.state, parsed)) return false;
  // The parsed copy is only ever given to `step` deep-frozen, so it stays as parsed.
  const frozenState = frozenCopyOf(record.state, frozenOfState, () => deepFreeze(parsed) as TurnState);
  const again = safeRun(run, frozenState, frozenCopy(record.event, frozenOfEvent));
  return (
    again !== null && deepEqualAlong(again[0], record.next, frozenState, record.state) && deepEqual(again[1], record.effects)
  );
}

// 3. Every state keeps core's state invariants and passes parseTurnState unchanged. Without
// `stateInvariants` the first is skipped, without `parseStates` the second (an exploration runs
// both once per distinct state instead: `stateInvariantProblems`, `textParseProblem`).
function stateChecks(record: TraceStep, report: Report, stateInvariants: boolean, parseStates: boolean): void {
  if (record.thrown !== undefined) return;
  if (stateInvariants) {
    for (const [name, state] of [
      ['state before', record.state],
      ['state after', record.next],
    ] as const) {
      for (const problem of brokenStateInvariants(name, state)) report(3, problem);
    }
  }
  if (!parseStates) return;
  parsesUnchanged('state before', record.state, report);
  parsesUnchanged('state after', record.next, report);
}

// The cross-field invariants parseTurnState enforces, from the same function: they cannot drift.
function brokenStateInvariants(name: string, state: TurnState): string[] {
  return stateProblems(state).map((problem) => `the ${name} breaks a state invariant: '${problem.field}' ${problem.message}`);
}

/**
 * Core's cross-field state invariants for one state, as messages (a check that throws is one).
 * An exploration runs them once per distinct state, on the first edge that reaches it, with the
 * parse check (`textParseProblem`); `name` says which state of that edge it is.
 */
export function stateInvariantProblems(state: TurnState, name: string): string[] {
  try {
    return brokenStateInvariants(name, state);
  } catch (error) {
    return [`checking the ${name} against core's state invariants threw: ${describe(error)}`];
  }
}

// An exploration meets one state object on every edge out of it, one edge after the other, and a
// trace meets each state twice in a row (the state after one step is the state before the next):
// a state's JSON text, its parsed copy and its deep-frozen copy are kept for the last few objects
// they were made for. States and events are plain JSON that step never changes (invariant 2
// checks that). Before, each was kept in a WeakMap for as long as its object lived: every
// frontier state of an exploration held its copies, and the garbage collector went through the
// entries of each table in every young-generation collection.

/** What was made for the last `RECENT` objects (by identity), oldest replaced first. */
class Recent<V> {
  readonly #keys: Array<object | undefined> = new Array<object | undefined>(RECENT).fill(undefined);
  readonly #values: Array<V | undefined> = new Array<V | undefined>(RECENT).fill(undefined);
  #next = 0;

  get(key: object): V | undefined {
    for (let i = 0; i < RECENT; i++) if (this.#keys[i] === key) return this.#values[i];
    return undefined;
  }

  set(key: object, value: V): void {
    this.#keys[this.#next] = key;
    this.#values[this.#next] = value;
    this.#next = (this.#next + 1) % RECENT;
  }

  forget(key: object): void {
    for (let i = 0; i < RECENT; i++)
      if (this.#keys[i] === key) {
        this.#keys[i] = undefined;
        this.#values[i] = undefined;
      }
  }
}

const RECENT = 4;
const jsonOfState = new Recent<string>();
const frozenOfState = new Recent<unknown>();
/** Apart from the states', so that the events of one state's edges do not push its copy out. */
const frozenOfEvent = new Recent<unknown>();
const parsedOfState = new Recent<unknown>();
const parsesBackOfState = new Recent<boolean>();

/** `JSON.stringify(state)`, made once for the same state object met again soon. */
export function stateJson(state: TurnState): string {
  let json = jsonOfState.get(state);
  if (json === undefined) {
    json = JSON.stringify(state);
    jsonOfState.set(state, json);
  }
  return json;
}

/**
 * `JSON.parse` of the state's JSON text, made once for the same state object met again soon: what
 * a copy given to `step` must still be after it. Given to `step` only deep-frozen (as the frozen
 * copy of a state that parses back to it) and never out, so it stays as parsed.
 */
function parsedCopy(state: TurnState, text: string): unknown {
  let parsed = parsedOfState.get(state);
  if (parsed === undefined) {
    parsed = JSON.parse(text) as unknown;
    parsedOfState.set(state, parsed);
  }
  return parsed;
}

/** True when the state's parsed JSON text is deeply equal to it; found once for the same state object met again soon. */
function parsesBack(state: TurnState, parsed: unknown): boolean {
  let back = parsesBackOfState.get(state);
  if (back === undefined) {
    back = deepEqual(parsed, state);
    parsesBackOfState.set(state, back);
  }
  return back;
}

/** A deep-frozen copy of a state or event, made once for the same object met again soon (a primitive event is its own copy). */
function frozenCopy<T>(value: T, made: Recent<unknown>): T {
  return frozenCopyOf(value, made, () => deepFreeze(deepClone(value)));
}

/** The copy `make` gives for `value`, made once for the same object met again soon (a primitive is its own copy). */
function frozenCopyOf<T>(value: T, made: Recent<unknown>, make: () => T): T {
  if (value === null || typeof value !== 'object') return value;
  let frozen = made.get(value) as T | undefined;
  if (frozen === undefined) {
    frozen = make();
    made.set(value, frozen);
  }
  return frozen;
}

// The JSON texts of states that passed parseTurnState unchanged: the text alone decides the answer,
// and an exploration makes many state objects with one text. Bounded, for long property runs.
const parsedUnchanged = new Set<string>();
const MAX_PARSED_TEXTS = 20_000;

function parsesUnchanged(name: string, state: TurnState, report: Report): void {
  let text: string;
  try {
    text = stateJson(state);
  } catch (error) {
    report(3, `parseTurnState rejected the ${name}: ${describe(error)}`);
    return;
  }
  const problem = parseProblemOfText(text, name);
  if (problem !== undefined) report(3, problem);
}

/** The parse check of a state's JSON text, remembering the texts that passed; `name` says which state it is. */
function parseProblemOfText(text: string, name: string): string | undefined {
  if (parsedUnchanged.has(text)) return undefined;
  const problem = textParseProblem(text, name);
  if (problem !== undefined) return problem;
  if (parsedUnchanged.size >= MAX_PARSED_TEXTS) parsedUnchanged.clear();
  parsedUnchanged.add(text);
  return undefined;
}

/**
 * Invariant 3's parse check of a state's JSON text, without remembering the texts that passed:
 * an exploration, which meets each distinct state once, runs it on the text it fingerprinted.
 */
export function textParseProblem(text: string, name = 'state'): string | undefined {
  try {
    const plain = JSON.parse(text) as { status?: unknown };
    if (!deepEqual(parseTurnState(text), plain)) return `parseTurnState changed the ${name} (status ${String(plain.status)})`;
    return undefined;
  } catch (error) {
    return `parseTurnState rejected the ${name}: ${describe(error)}`;
  }
}

// 4. Terminal states absorb every event.
function terminalAbsorbs(record: TraceStep, report: Report): void {
  if (!isTerminal(record.state)) return;
  if (record.next !== record.state) report(4, `the terminal state (${record.state.status}) was replaced by a new object`);
  if (record.effects.length > 0)
    report(4, `the terminal state (${record.state.status}) emitted ${record.effects.map((e) => e.type).join(', ')}`);
}

// 5. At most one blocking effect, last; `done` exactly when the status becomes terminal.
function blockingLast(record: TraceStep, report: Report): void {
  const effects = record.effects;
  // One pass over the effects (this runs on every edge): the blocking ones and the `done` ones counted.
  let blockingCount = 0;
  let firstBlocking: Effect | undefined;
  let doneCount = 0;
  let firstDone: Effect | undefined;
  for (const effect of effects) {
    if (isBlocking(effect)) {
      if (blockingCount === 0) firstBlocking = effect;
      blockingCount += 1;
    }
    if (effect.type === 'done') {
      if (doneCount === 0) firstDone = effect;
      doneCount += 1;
    }
  }
  if (blockingCount > 1) {
    const blocking = effects.filter(isBlocking);
    report(5, `${blocking.length} blocking effects in one list: ${blocking.map((e) => e.type).join(', ')}`);
  }
  const last = effects[effects.length - 1];
  if (blockingCount === 1 && last !== firstBlocking) report(5, `the blocking effect ${firstBlocking?.type} is not last`);
  const becameTerminal = !isTerminal(record.state) && isTerminal(record.next);
  if (becameTerminal && doneCount !== 1) report(5, `the status became ${record.next.status} without a done effect`);
  if (!becameTerminal && doneCount > 0)
    report(5, `done was emitted but the status went ${record.state.status} -> ${record.next.status}`);
  if (becameTerminal && firstDone?.type === 'done' && !deepEqual(firstDone.outcome, record.next.outcome)) {
    report(5, "done's outcome differs from the state's outcome");
  }
}

// 9. round and every usage counter never decrease.
function monotone(record: TraceStep, report: Report): void {
  const before = record.state;
  const after = record.next;
  if (after.round < before.round) report(9, `round went down from ${before.round} to ${after.round}`);
  const was = before.usage;
  const is = after.usage;
  // Each counter by name (this runs on every edge; a loop over the names read them by key, 5% of a
  // check's time), in the order of `TurnUsage`.
  if (is === was) return;
  if (is.modelCalls < was.modelCalls) report(9, `usage.modelCalls went down from ${was.modelCalls} to ${is.modelCalls}`);
  if (is.toolCalls < was.toolCalls) report(9, `usage.toolCalls went down from ${was.toolCalls} to ${is.toolCalls}`);
  if (is.inputTokens < was.inputTokens) report(9, `usage.inputTokens went down from ${was.inputTokens} to ${is.inputTokens}`);
  if (is.outputTokens < was.outputTokens)
    report(9, `usage.outputTokens went down from ${was.outputTokens} to ${is.outputTokens}`);
  if (is.totalTokens < was.totalTokens) report(9, `usage.totalTokens went down from ${was.totalTokens} to ${is.totalTokens}`);
  if (is.cost < was.cost) report(9, `usage.cost went down from ${was.cost} to ${is.cost}`);
}

// 6, 7, 8, 10: the history invariants.
// ---------------------------------------------------------------------------------------------
// Running events

/**
 * Feeds `events` to `step` from `createTurn`-like `initial` and records the trace. A throwing
 * step is recorded (`thrown`) and the run stops there.
 */
export function traceFrom(initial: TurnState, events: readonly unknown[], run: StepFunction = coreStep): StepTrace {
  const steps: TraceStep[] = [];
  let state = initial;
  for (const event of events) {
    try {
      const [next, effects] = run(state, event);
      steps.push({ state, event, next, effects });
      state = next;
    } catch (error) {
      steps.push({ state, event, next: state, effects: [], thrown: describe(error) });
      break;
    }
  }
  return { limits: initial.limits, steps };
}

function safeRun(run: StepFunction, state: TurnState, event: unknown): readonly [TurnState, readonly Effect[]] | null {
  try {
    return run(state, event);
  } catch {
    return null;
  }
}

/** A copy of plain data (objects, arrays); other values are shared. Keeps keys like `__proto__`. */
export function deepClone<T>(value: T): T {
  if (Array.isArray(value)) return value.map((item: unknown) => deepClone(item)) as T;
  if (value !== null && typeof value === 'object') {
    const proto = Object.getPrototypeOf(value) as object | null;
    if (proto !== Object.prototype && proto !== null) return value;
    const copy: Record<string, unknown> = proto === null ? Object.create(null) : {};
    for (const key of Object.keys(value)) {
      const item = deepClone((value as Record<string, unknown>)[key]);
      // Assigning `__proto__` would set the prototype: that one key is defined instead.
      if (key === '__proto__')
        Object.defineProperty(copy, key, { value: item, enumerable: true, writable: true, configurable: true });
      else copy[key] = item;
    }
    return copy as T;
  }
  return value;
}

/** Freezes plain data in place, all the way down. */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  }
  return value;
}
