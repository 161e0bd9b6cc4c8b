// The history invariants (6, 7, 8, 10): each needs what came before, so each keeps its own part
// of a small monitor folded over the steps. The monitor is plain JSON, which lets the exploration
// key its nodes by (state, monitor) and stay sound even when a buggy reducer reaches one state
// along two different histories.

import { batchSignature } from '@turnkit/core/internal';
import { isTerminal } from '@turnkit/core';
import type { ToolCall, TurnState } from '@turnkit/core';
import type { TurnLimits } from '@turnkit/core/internal';
import type { InvariantNumber, TraceStep } from './trace-types.js';

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

export type Report = (invariant: InvariantNumber, message: string) => void;

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

/** A monitor being made: the history invariants of one step write their parts here. */
type Draft = { -readonly [K in keyof MonitorState]: MonitorState[K] };

/**
 * The one draft, filled and read within each `observeHistory` call: the four invariants each
 * returned their parts as an object before (and invariant 10 made a list and a closure for each
 * step): the history invariants allocated 350 bytes an edge of an exploration, 115 with the
 * draft (maxIterations 3 with the re-runs on 1 node in 16, of 2.9 kB an edge in all).
 */
const draft: Draft = {
  open: [],
  modelCalls: 0,
  dispatched: [],
  executed: [],
  parked: [],
  decided: {},
  loopSignature: null,
  loopRun: 0,
  callsAfterLoop: null,
  recoveries: 0,
};

/** Runs the four history invariants on one step; returns the monitor for the next. */
export function observeHistory(limits: TurnLimits, record: TraceStep, monitor: MonitorState, report: Report): MonitorState {
  const open = resultsPaired(record, monitor, report);
  const modelCalls = limitsHeld(limits, record, monitor, report);
  callsRunOnce(record, monitor, report, draft);
  loopsStopped(limits, record, monitor, report, draft);
  const { dispatched, executed, parked, decided, loopSignature, loopRun, callsAfterLoop, recoveries } = draft;
  // Unchanged, the monitor is given back as it is: an exploration keys nodes by it and reuses its key.
  if (
    open === monitor.open &&
    modelCalls === monitor.modelCalls &&
    dispatched === monitor.dispatched &&
    executed === monitor.executed &&
    parked === monitor.parked &&
    decided === monitor.decided &&
    loopSignature === monitor.loopSignature &&
    loopRun === monitor.loopRun &&
    callsAfterLoop === monitor.callsAfterLoop &&
    recoveries === monitor.recoveries
  )
    return monitor;
  return { open, modelCalls, dispatched, executed, parked, decided, loopSignature, loopRun, callsAfterLoop, recoveries };
}

/** 6: every tool call gets exactly one result, in call order, before the next assistant message or the end. */
function resultsPaired(record: TraceStep, monitor: MonitorState, report: Report): MonitorState['open'] {
  let open = monitor.open;
  for (const effect of record.effects) {
    if (effect.type === 'done' && open.length > 0) report(6, `the turn ended while ${listIds(open)} had no result`);
    if (effect.type !== 'append') continue;
    const message = effect.message;
    if (message.role === 'assistant') {
      if (open.length > 0) report(6, `an assistant message was appended while ${listIds(open)} had no result`);
      open = message.toolCalls.map((c) => [c.id, c.name] as const);
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
  }
  return open;
}

const listIds = (open: MonitorState['open']): string => open.map(([id]) => id).join(', ');

/** 7: model calls, retries, calls per reply and the tool-call budget stay within the limits, and the counter tells the truth. */
function limitsHeld(limits: TurnLimits, record: TraceStep, monitor: MonitorState, report: Report): number {
  let modelCalls = monitor.modelCalls;
  for (const effect of record.effects) {
    if (effect.type === 'call_llm') {
      modelCalls += 1;
      const attempt = effect.request.attempt ?? 0;
      if (attempt > limits.maxModelRetries)
        report(7, `model call ${modelCalls} is retry ${attempt}, past maxModelRetries = ${limits.maxModelRetries}`);
      const max = (limits.maxIterations + 1 + limits.maxOutputRepairs + limits.loopRecoveries) * (1 + limits.maxModelRetries);
      if (modelCalls > max)
        report(
          7,
          `model call ${modelCalls} exceeds (maxIterations + 1 + maxOutputRepairs + loopRecoveries) * (1 + maxModelRetries) = ${max}`,
        );
      const budget = limits.budget.maxModelCalls;
      if (budget !== undefined && modelCalls > budget) report(7, `model call ${modelCalls} exceeds maxModelCalls = ${budget}`);
    } else if (effect.type === 'dispatch_tools') {
      if (effect.calls.length > limits.maxCallsPerReply)
        report(7, `${effect.calls.length} calls were dispatched at once, past maxCallsPerReply = ${limits.maxCallsPerReply}`);
      if (limits.budget.maxToolCalls !== undefined && record.next.usage.toolCalls > limits.budget.maxToolCalls) {
        report(7, `usage.toolCalls is ${record.next.usage.toolCalls}, past maxToolCalls = ${limits.budget.maxToolCalls}`);
      }
    }
  }
  // The counter must tell the truth, or budgets are checked against a wrong number.
  if (!isTerminal(record.state) && record.next.usage.modelCalls !== modelCalls) {
    report(7, `usage.modelCalls is ${record.next.usage.modelCalls} but ${modelCalls} model calls were issued`);
  }
  return modelCalls;
}

/** 8: a call id is dispatched once, and a parked call runs once, only in its round, and only when approved. Its parts of the next monitor go to `out`. */
function callsRunOnce(record: TraceStep, monitor: MonitorState, report: Report, out: Draft): void {
  let { dispatched, executed, parked, decided } = monitor;
  decided = readDecisions(record, parked, decided);
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
  for (const effect of record.effects) {
    if (effect.type === 'dispatch_tools') {
      for (const call of effect.calls) {
        if (dispatched.includes(call.id)) report(8, `call id ${call.id} was dispatched twice`);
        dispatched = [...dispatched, call.id].sort();
      }
    } else if (effect.type === 'execute_approved') {
      for (const call of effect.calls) {
        if (executed.includes(call.id)) report(8, `call id ${call.id} was executed twice`);
        if (!parked.includes(call.id)) report(8, `call ${call.id} was executed but was never parked for approval`);
        else if (decided[call.id] !== 'approve') report(8, `parked call ${call.id} was executed without an approve decision`);
        executed = [...executed, call.id];
      }
    }
  }
  // Leaving the approval round forgets it: a call can run only in its own round, and being
  // dispatched again would already be a violation.
  if (record.next.status !== 'awaiting_approval' && record.next.status !== 'executing_approved') {
    if (parked.length > 0) parked = [];
    if (hasKeys(decided)) decided = {};
    if (executed.length > 0) executed = [];
  }
  out.dispatched = dispatched;
  out.executed = executed;
  out.parked = parked;
  out.decided = decided;
}

/** The first valid decision per parked id, read from the events, independently of the reducer's bookkeeping. */
function readDecisions(record: TraceStep, parked: readonly string[], decided: MonitorState['decided']): MonitorState['decided'] {
  if (record.state.status !== 'awaiting_approval' || isTerminal(record.next)) return decided;
  const event = record.event as { type?: unknown; decisions?: unknown };
  if (event === null || typeof event !== 'object') return decided;
  if (event.type === 'approvals_decided' && isRecord(event.decisions)) {
    const next: Record<string, 'approve' | 'reject'> = { ...decided };
    for (const [id, decision] of Object.entries(event.decisions)) {
      const kind = validDecision(decision);
      if (kind !== null && parked.includes(id) && !Object.hasOwn(next, id))
        Object.defineProperty(next, id, { value: kind, enumerable: true });
    }
    return next;
  }
  if (event.type === 'approval_expired') {
    const next: Record<string, 'approve' | 'reject'> = { ...decided };
    for (const id of parked) if (!Object.hasOwn(next, id)) Object.defineProperty(next, id, { value: 'reject', enumerable: true });
    return next;
  }
  return decided;
}

/**
 * 10: identical non-exempt batches in a row are a loop: the loop batch is not dispatched, and the
 * turn ends with one forced final call (plus repairs) unless it recovers, at most loopRecoveries times.
 * An all-exempt batch neither counts nor resets. Its parts of the next monitor go to `out`.
 */
function loopsStopped(limits: TurnLimits, record: TraceStep, monitor: MonitorState, report: Report, out: Draft): void {
  let { loopSignature, loopRun, callsAfterLoop, recoveries } = monitor;
  let batch: readonly ToolCall[] | null = null;
  let dispatchedNow = false;
  for (const effect of record.effects) if (effect.type === 'dispatch_tools') dispatchedNow = true;
  for (const effect of record.effects) {
    if (effect.type === 'append' && effect.message.role === 'assistant') {
      const calls = effect.message.toolCalls;
      if (calls.length > 0 && record.state.forced === null) batch = calls;
    } else if (effect.type === 'call_llm') {
      // A retry repeats the call in hand: it is not another call after a loop.
      if (callsAfterLoop !== null && (effect.request.attempt ?? 0) === 0) {
        callsAfterLoop += 1;
        if (!effect.request.final) report(10, 'a model call after a loop was not a forced final one');
        if (callsAfterLoop > 1 + limits.maxOutputRepairs)
          report(10, `the turn went on for ${callsAfterLoop} model calls after a loop`);
      }
    } else if (effect.type === 'dispatch_tools' && callsAfterLoop !== null) {
      report(10, 'tools were dispatched after a loop was detected');
    }
  }
  out.loopSignature = loopSignature;
  out.loopRun = loopRun;
  out.callsAfterLoop = callsAfterLoop;
  out.recoveries = recoveries;
  if (batch === null) return;
  const counted = limits.loopExemptTools.length === 0 ? batch : batch.filter((c) => !limits.loopExemptTools.includes(c.name));
  if (counted.length === 0) return;
  const signature = batchSignature(counted);
  loopRun = signature === loopSignature ? loopRun + 1 : 1;
  loopSignature = signature;
  const isLoop = limits.loopThreshold > 0 && loopRun >= limits.loopThreshold;
  if (isLoop && dispatchedNow)
    report(10, `batch ${loopRun} of ${limits.loopThreshold} identical batches in a row was dispatched`);
  if (isLoop && !isTerminal(record.next)) {
    if (record.next.round !== record.state.round) report(10, 'a batch skipped as a loop counted as a tool round');
    const call = record.effects.find((e) => e.type === 'call_llm');
    if (call?.type === 'call_llm' && !call.request.final) {
      // A loop recovery: the model keeps its tools, at most loopRecoveries times a turn, and the
      // same batch once more is the next loop.
      recoveries += 1;
      if (recoveries > limits.loopRecoveries)
        report(10, `a loop was answered with tools for the ${recoveries}th time, past loopRecoveries = ${limits.loopRecoveries}`);
      loopRun = limits.loopThreshold - 1;
    } else callsAfterLoop = call === undefined ? 0 : 1;
  }
  out.loopSignature = loopSignature;
  out.loopRun = loopRun;
  out.callsAfterLoop = callsAfterLoop;
  out.recoveries = recoveries;
}

function validDecision(value: unknown): 'approve' | 'reject' | null {
  if (!isRecord(value)) return null;
  if (value.type === 'approve')
    return value.remember === undefined || value.remember === 'session' || value.remember === 'tool' ? 'approve' : null;
  if (value.type === 'reject') return value.reason === undefined || typeof value.reason === 'string' ? 'reject' : null;
  return null;
}

/** `Object.keys(record).length > 0` without making the array (this runs on most edges). */
function hasKeys(record: object): boolean {
  for (const key in record) if (Object.hasOwn(record, key)) return true;
  return false;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);
