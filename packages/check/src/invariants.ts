// The ten invariants of the turn contract (docs/turn-contract.md, "Invariants"), checked on a trace.
//
// A trace is what a driver saw: for each step the state before, the event, the state after and
// the effects. Per-step invariants (1–5, 9) look at one step; history invariants (6, 7, 8, 10)
// need what came before, so they run as a small monitor folded over the steps. The monitor is
// plain JSON, which lets the exploration key its nodes by (state, monitor) and stay sound even
// when a buggy reducer reaches one state along two different histories.

import { isDeepStrictEqual } from 'node:util';
import { batchSignature, errorMessage, isBlocking, isTerminal, parseTurnState, step as coreStep } from '@turnkit/core';
import type { Effect, ToolCall, TurnLimits, TurnState } from '@turnkit/core';
import type { StepFunction } from './logic.js';

/** One step of a trace: `[next, effects] = step(state, event)`; `thrown` when step threw. */
export interface TraceStep {
  readonly state: TurnState;
  readonly event: unknown;
  readonly next: TurnState;
  readonly effects: readonly Effect[];
  readonly thrown?: string;
}

/**
 * A run of one turn. `steps[i + 1].state` is `steps[i].next`. Traces start at any state (usually a
 * fresh `createTurn`); counts such as model calls start from that state's counters. Build one
 * with `runEvents`.
 */
export interface StepTrace {
  readonly limits: TurnLimits;
  readonly steps: readonly TraceStep[];
}

export type InvariantNumber = 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 | 9 | 10;

export interface Violation {
  readonly invariant: InvariantNumber;
  /** Index of the offending step in the trace. */
  readonly step: number;
  readonly message: string;
}

export interface CheckOptions {
  /** The reducer re-run for invariants 2 and 3 (default: core's `step`). */
  readonly step?: StepFunction;
  /** Check only these invariants (default: all ten). */
  readonly only?: readonly InvariantNumber[];
}

/** What the history invariants remember between steps. Plain JSON. */
export interface MonitorState {
  /** Tool calls of the last assistant message still without a result, in call order. */
  readonly open: ReadonlyArray<readonly [id: string, name: string]>;
  readonly modelCalls: number;
  readonly dispatched: readonly string[];
  readonly executed: readonly string[];
  /** Parked call ids of the current approval round and the first valid decision per id. */
  readonly parked: readonly string[];
  readonly decided: Readonly<Record<string, 'approve' | 'reject'>>;
  /** Signature of the last counted batch and how many identical batches in a row. */
  readonly loopSignature: string | null;
  readonly loopRun: number;
  /** Model calls issued since a loop was detected (null: no loop yet). */
  readonly callsAfterLoop: number | null;
  /** Loops answered with a nudge instead of a forced final call (`limits.loopRecoveries`). */
  readonly recoveries: number;
}

/** The monitor at the start of a trace that begins at `state`. */
export function initialMonitor(state: TurnState): MonitorState {
  return {
    open: [],
    modelCalls: state.usage.modelCalls,
    dispatched: [],
    executed: [],
    parked: [],
    decided: {},
    loopSignature: state.lastBatch === null ? null : batchSignature(state.lastBatch),
    loopRun: state.repeats,
    callsAfterLoop: state.forced === 'loop_detected' ? 1 : null,
    recoveries: state.recoveries,
  };
}

/**
 * Checks every invariant of docs/turn-contract.md that a trace can show. Never throws; returns the violations in
 * step order (empty when the trace is clean).
 *
 * @example
 * const trace = runEvents({ maxIterations: 2 }, [{ type: 'start' }, { type: 'cancel' }]);
 * expect(checkInvariants(trace)).toEqual([]);
 */
export function checkInvariants(trace: StepTrace, options: CheckOptions = {}): Violation[] {
  const violations: Violation[] = [];
  const first = trace.steps[0];
  if (first === undefined) return violations;
  let monitor = initialMonitor(first.state);
  trace.steps.forEach((record, index) => {
    const result = checkStep(trace.limits, record, index, monitor, options);
    monitor = result.monitor;
    violations.push(...result.violations);
  });
  return violations;
}

/** Checks one step given the monitor of the steps before it; returns the next monitor. */
export function checkStep(
  limits: TurnLimits,
  record: TraceStep,
  index: number,
  monitor: MonitorState,
  options: CheckOptions = {},
): { monitor: MonitorState; violations: Violation[] } {
  const violations: Violation[] = [];
  const wanted = (n: InvariantNumber): boolean => options.only === undefined || options.only.includes(n);
  const report = (invariant: InvariantNumber, message: string): void => {
    if (wanted(invariant)) violations.push({ invariant, step: index, message });
  };
  const run = options.step ?? coreStep;
  let next = monitor;
  try {
    if (wanted(1)) neverThrows(record, report);
    if (wanted(2)) deterministic(record, run, report);
    if (wanted(3)) roundTrips(record, run, report);
    if (wanted(4)) terminalAbsorbs(record, report);
    if (wanted(5)) blockingLast(record, report);
    if (wanted(9)) monotone(record, report);
    next = observeHistory(limits, record, monitor, report);
  } catch (error) {
    // A checker bug (or a hostile trace) must not hide the other results.
    report(1, `checking this step threw: ${describe(error)}`);
  }
  return { monitor: next, violations };
}

type Report = (invariant: InvariantNumber, message: string) => void;

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

// 2. Deterministic, no mutation, deep-frozen inputs work.
function deterministic(record: TraceStep, run: StepFunction, report: Report): void {
  if (record.thrown !== undefined) return;
  const stateCopy = deepClone(record.state);
  const eventCopy = deepClone(record.event);
  const again = safeRun(run, deepFreeze(deepClone(record.state)), deepFreeze(deepClone(record.event)));
  if (again === null || !isDeepStrictEqual(again[0], record.next) || !isDeepStrictEqual(again[1], record.effects)) {
    report(2, `step on deep-frozen copies of the state and event gave a different result${again === null ? ' (it threw)' : ''}`);
  }
  const unfrozenState = deepClone(record.state);
  const unfrozenEvent = deepClone(record.event);
  safeRun(run, unfrozenState, unfrozenEvent);
  if (!isDeepStrictEqual(unfrozenState, stateCopy)) report(2, 'step mutated the state it was given');
  if (!isDeepStrictEqual(unfrozenEvent, eventCopy)) report(2, 'step mutated the event it was given');
}

// 3. JSON round trip gives the same step; every state passes parseTurnState unchanged.
function roundTrips(record: TraceStep, run: StepFunction, report: Report): void {
  if (record.thrown !== undefined) return;
  const revived = JSON.parse(JSON.stringify(record.state)) as TurnState;
  const again = safeRun(run, revived, record.event);
  if (again === null || !isDeepStrictEqual(again[0], record.next) || !isDeepStrictEqual(again[1], record.effects)) {
    report(3, 'step on a JSON round trip of the state gave a different result');
  }
  for (const [name, state] of [
    ['state before', record.state],
    ['state after', record.next],
  ] as const) {
    try {
      const parsed = parseTurnState(JSON.stringify(state));
      if (!isDeepStrictEqual(parsed, JSON.parse(JSON.stringify(state))))
        report(3, `parseTurnState changed the ${name} (status ${state.status})`);
    } catch (error) {
      report(3, `parseTurnState rejected the ${name}: ${describe(error)}`);
    }
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
  const blocking = record.effects.filter(isBlocking);
  if (blocking.length > 1)
    report(5, `${blocking.length} blocking effects in one list: ${blocking.map((e) => e.type).join(', ')}`);
  const last = record.effects[record.effects.length - 1];
  if (blocking.length === 1 && last !== blocking[0]) report(5, `the blocking effect ${blocking[0]?.type} is not last`);
  const becameTerminal = !isTerminal(record.state) && isTerminal(record.next);
  const done = record.effects.filter((e) => e.type === 'done');
  if (becameTerminal && done.length !== 1) report(5, `the status became ${record.next.status} without a done effect`);
  if (!becameTerminal && done.length > 0)
    report(5, `done was emitted but the status went ${record.state.status} -> ${record.next.status}`);
  if (becameTerminal && done[0]?.type === 'done' && !isDeepStrictEqual(done[0].outcome, record.next.outcome)) {
    report(5, "done's outcome differs from the state's outcome");
  }
}

// 9. round and every usage counter never decrease.
function monotone(record: TraceStep, report: Report): void {
  const before = record.state;
  const after = record.next;
  if (after.round < before.round) report(9, `round went down from ${before.round} to ${after.round}`);
  for (const key of ['modelCalls', 'toolCalls', 'inputTokens', 'outputTokens', 'totalTokens', 'cost'] as const) {
    if (after.usage[key] < before.usage[key])
      report(9, `usage.${key} went down from ${before.usage[key]} to ${after.usage[key]}`);
  }
}

// 6, 7, 8, 10: the history invariants.
function observeHistory(limits: TurnLimits, record: TraceStep, monitor: MonitorState, report: Report): MonitorState {
  let open = monitor.open;
  let modelCalls = monitor.modelCalls;
  let dispatched = monitor.dispatched;
  let executed = monitor.executed;
  let parked = monitor.parked;
  let decided = monitor.decided;
  let loopSignature = monitor.loopSignature;
  let loopRun = monitor.loopRun;
  let recoveries = monitor.recoveries;
  let callsAfterLoop = monitor.callsAfterLoop;

  // 8: decisions are read from the events, independently of the reducer's bookkeeping.
  if (record.state.status === 'awaiting_approval' && !isTerminal(record.next)) {
    const event = record.event as { type?: unknown; decisions?: unknown };
    if (event !== null && typeof event === 'object' && event.type === 'approvals_decided' && isRecord(event.decisions)) {
      const next: Record<string, 'approve' | 'reject'> = { ...decided };
      for (const [id, decision] of Object.entries(event.decisions)) {
        const kind = validDecision(decision);
        if (kind !== null && parked.includes(id) && !Object.hasOwn(next, id))
          Object.defineProperty(next, id, { value: kind, enumerable: true });
      }
      decided = next;
    } else if (event !== null && typeof event === 'object' && event.type === 'approval_expired') {
      const next: Record<string, 'approve' | 'reject'> = { ...decided };
      for (const id of parked)
        if (!Object.hasOwn(next, id)) Object.defineProperty(next, id, { value: 'reject', enumerable: true });
      decided = next;
    }
  }

  // A new approval round starts when a batch parks (before this step's effects, which may
  // already act on it).
  if (
    record.state.status === 'dispatching' &&
    (record.next.status === 'awaiting_approval' || record.next.status === 'executing_approved')
  ) {
    const event = record.event as { parked?: unknown };
    parked = Array.isArray(event.parked) ? event.parked.map((p) => String((p as { call?: { id?: unknown } }).call?.id)) : [];
    decided = {};
  }

  let batchThisStep: { calls: readonly ToolCall[]; dispatched: boolean } | null = null;
  const dispatchedNow = record.effects.some((e) => e.type === 'dispatch_tools');
  for (const effect of record.effects) {
    switch (effect.type) {
      case 'append': {
        const message = effect.message;
        if (message.role === 'assistant') {
          if (open.length > 0)
            report(6, `an assistant message was appended while ${open.map(([id]) => id).join(', ')} had no result`);
          open = message.toolCalls.map((c) => [c.id, c.name] as const);
          if (message.toolCalls.length > 0 && record.state.forced === null)
            batchThisStep = { calls: message.toolCalls, dispatched: dispatchedNow };
        } else if (message.role === 'tool') {
          const [expected, ...rest] = open;
          const id = message.result.callId;
          if (expected === undefined) report(6, `a result for ${id} was appended but no tool call is waiting for one`);
          else if (expected[0] !== id) report(6, `the result for ${id} was appended where ${expected[0]} was next in call order`);
          else {
            if (message.result.name !== expected[1])
              report(6, `the result for ${id} names '${message.result.name}', its call is '${expected[1]}'`);
            open = rest;
          }
        }
        break;
      }
      case 'call_model': {
        modelCalls += 1;
        const attempt = effect.request.attempt ?? 0;
        if (attempt > limits.maxModelRetries)
          report(7, `model call ${modelCalls} is retry ${attempt}, past maxModelRetries = ${limits.maxModelRetries}`);
        // A retry repeats the call in hand: it is not another call after a loop.
        if (callsAfterLoop !== null && attempt === 0) {
          callsAfterLoop += 1;
          if (!effect.request.final) report(10, 'a model call after a loop was not a forced final one');
          if (callsAfterLoop > 1 + limits.maxOutputRepairs)
            report(10, `the turn went on for ${callsAfterLoop} model calls after a loop`);
        }
        const max = (limits.maxIterations + 1 + limits.maxOutputRepairs + limits.loopRecoveries) * (1 + limits.maxModelRetries);
        if (modelCalls > max)
          report(
            7,
            `model call ${modelCalls} exceeds (maxIterations + 1 + maxOutputRepairs + loopRecoveries) * (1 + maxModelRetries) = ${max}`,
          );
        const budget = limits.budget.maxModelCalls;
        if (budget !== undefined && modelCalls > budget) report(7, `model call ${modelCalls} exceeds maxModelCalls = ${budget}`);
        break;
      }
      case 'dispatch_tools':
        if (callsAfterLoop !== null) report(10, 'tools were dispatched after a loop was detected');
        if (effect.calls.length > limits.maxCallsPerReply)
          report(7, `${effect.calls.length} calls were dispatched at once, past maxCallsPerReply = ${limits.maxCallsPerReply}`);
        if (limits.budget.maxToolCalls !== undefined && record.next.usage.toolCalls > limits.budget.maxToolCalls) {
          report(7, `usage.toolCalls is ${record.next.usage.toolCalls}, past maxToolCalls = ${limits.budget.maxToolCalls}`);
        }
        for (const call of effect.calls) {
          if (dispatched.includes(call.id)) report(8, `call id ${call.id} was dispatched twice`);
          dispatched = [...dispatched, call.id].sort();
        }
        break;
      case 'execute_approved':
        for (const call of effect.calls) {
          if (executed.includes(call.id)) report(8, `call id ${call.id} was executed twice`);
          if (!parked.includes(call.id)) report(8, `call ${call.id} was executed but was never parked for approval`);
          else if (decided[call.id] !== 'approve') report(8, `parked call ${call.id} was executed without an approve decision`);
          executed = [...executed, call.id];
        }
        break;
      case 'done':
        if (open.length > 0) report(6, `the turn ended while ${open.map(([id]) => id).join(', ')} had no result`);
        break;
      default:
        break;
    }
  }

  // 7: the counter must tell the truth, or budgets are checked against a wrong number.
  if (!isTerminal(record.state) && record.next.usage.modelCalls !== modelCalls) {
    report(7, `usage.modelCalls is ${record.next.usage.modelCalls} but ${modelCalls} model calls were issued`);
  }

  // Leaving the approval round forgets it: a call can run only in its own round, and being
  // dispatched again would already be a violation.
  if (record.next.status !== 'awaiting_approval' && record.next.status !== 'executing_approved') {
    parked = [];
    decided = {};
    executed = [];
  }

  // 10: identical non-exempt batches in a row; an all-exempt batch neither counts nor resets.
  if (batchThisStep !== null) {
    const counted = batchThisStep.calls.filter((c) => !limits.loopExemptTools.includes(c.name));
    if (counted.length > 0) {
      const signature = batchSignature(counted);
      loopRun = signature === loopSignature ? loopRun + 1 : 1;
      loopSignature = signature;
      const isLoop = limits.loopThreshold > 0 && loopRun >= limits.loopThreshold;
      if (isLoop && batchThisStep.dispatched)
        report(10, `batch ${loopRun} of ${limits.loopThreshold} identical batches in a row was dispatched`);
      if (isLoop && !isTerminal(record.next)) {
        if (record.next.round !== record.state.round) report(10, 'a batch skipped as a loop counted as a tool round');
        const call = record.effects.find((e) => e.type === 'call_model');
        if (call?.type === 'call_model' && !call.request.final) {
          // A loop recovery: the model keeps its tools, at most loopRecoveries times a turn, and the
          // same batch once more is the next loop.
          recoveries += 1;
          if (recoveries > limits.loopRecoveries)
            report(
              10,
              `a loop was answered with tools for the ${recoveries}th time, past loopRecoveries = ${limits.loopRecoveries}`,
            );
          loopRun = limits.loopThreshold - 1;
        } else callsAfterLoop = call === undefined ? 0 : 1;
      }
    }
  }

  return { open, modelCalls, dispatched, executed, parked, decided, loopSignature, loopRun, callsAfterLoop, recoveries };
}

function validDecision(value: unknown): 'approve' | 'reject' | null {
  if (!isRecord(value)) return null;
  if (value.type === 'approve')
    return value.remember === undefined || value.remember === 'session' || value.remember === 'tool' ? 'approve' : null;
  if (value.type === 'reject') return value.reason === undefined || typeof value.reason === 'string' ? 'reject' : null;
  return null;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

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
    const copy = Object.create(proto) as Record<string, unknown>;
    for (const key of Object.keys(value)) {
      Object.defineProperty(copy, key, {
        value: deepClone((value as Record<string, unknown>)[key]),
        enumerable: true,
        writable: true,
        configurable: true,
      });
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
