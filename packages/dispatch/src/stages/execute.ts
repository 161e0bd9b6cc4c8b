// Pipeline stage 7: run the tool under one deadline and the turn's cancellation, retrying thrown
// errors its `retryOn` accepts. The tool is user code: whatever it does (throw, hang, ignore its
// signal, reject after a cancel) becomes one RawResult, and no rejection is left unhandled.

import type { ToolCall } from '@turnkit/core';
import type { Cancellation } from '../cancellation.js';
import { MAX_TIMEOUT_MS, type AnyTool } from '../config.js';
import { sleep } from '../race.js';
import { unwatch, watch, type Deadline } from '../deadlines.js';
import { kindOf, type ToolErrorKind } from '../errors.js';
import { nextWait, retryFor, type KindRetry, type RetryPolicy } from '../retry.js';
import { describeThrown, quote } from '../text.js';
import type { RawResult } from '../types.js';
import type { TurnInfo } from './hooks.js';

/** A call's result after every try, and how many tries were made (0: none, the turn was cancelled first). */
export interface Executed {
  readonly result: RawResult;
  readonly attempts: number;
}

/** How one try ended. */
export type RunOutcome =
  | { readonly kind: 'ok'; readonly value: unknown }
  | { readonly kind: 'error'; readonly error: unknown }
  | { readonly kind: 'timeout' }
  | { readonly kind: 'cancelled' };

type ThenFn = (onResolved: (value: unknown) => void, onRejected: (error: unknown) => void) => unknown;

/** The tool's own cancellation: its AbortSignal is made only if the tool reads `ctx.signal`. */
class ToolAbort {
  #controller: AbortController | undefined;
  #aborted: { readonly reason: unknown } | undefined;

  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#aborted !== undefined) this.#controller.abort(this.#aborted.reason);
    }
    return this.#controller.signal;
  }

  abort(reason: unknown): void {
    this.#aborted = { reason };
    this.#controller?.abort(reason);
  }
}

const nativeThen = Promise.prototype.then as ThenFn;

/**
 * A tool's pending try, settled by the first of: its promise, the turn's cancellation, its
 * deadline (watched with every other call's, see deadlines.ts). One object per try.
 */
class PendingTry implements Deadline {
  readonly at: number;
  readonly #tool: AnyTool;
  readonly #abort: ToolAbort;
  readonly #turn: Cancellation;
  readonly #timeoutMs: number;
  readonly #resolve: (outcome: RunOutcome) => void;
  readonly #removeAbort: () => void;
  #settled = false;

  constructor(
    resolve: (outcome: RunOutcome) => void,
    tool: AnyTool,
    abort: ToolAbort,
    turn: Cancellation,
    timeoutMs: number,
    deadline: number,
  ) {
    this.at = deadline;
    this.#resolve = resolve;
    this.#tool = tool;
    this.#abort = abort;
    this.#turn = turn;
    this.#timeoutMs = timeoutMs;
    // Abort the tool's signal first, then settle: a tool that rejects on abort does so a
    // microtask later, so the call is reported as cancelled or timed out, not as an error.
    this.#removeAbort = turn.onAbort(() => {
      abort.abort(turn.reason);
      this.settle(CANCELLED_TRY);
    });
    watch(this);
  }

  /** The deadline passed: the tool's signal aborts with a TimeoutError. */
  expire(): void {
    this.#abort.abort(new DOMException(`Tool '${this.#tool.name}' timed out after ${this.#timeoutMs} ms.`, 'TimeoutError'));
    this.settle({ kind: 'timeout' });
  }

  settle(outcome: RunOutcome): void {
    if (this.#settled) return;
    this.#settled = true;
    unwatch(this);
    this.#removeAbort();
    this.#resolve(outcome);
  }
}

/** Settles a tool's pending promise against the turn's cancellation and the call's deadline (counted from the first try). */
function settleAgainst(
  value: unknown,
  then: ThenFn,
  tool: AnyTool,
  abort: ToolAbort,
  turn: Cancellation,
  timeoutMs: number,
  deadline: number,
): Promise<RunOutcome> {
  return new Promise((resolve) => {
    const pending = new PendingTry(resolve, tool, abort, turn, timeoutMs, deadline);
    const ok = (result: unknown): void => pending.settle({ kind: 'ok', value: result });
    const failed = (error: unknown): void => pending.settle({ kind: 'error', error });
    // A tool that ignores its signal keeps running after a timeout; its late result is dropped.
    // A native promise is subscribed to directly; any other thenable through a promise, which
    // calls back once and takes a throw of its `then` as a rejection.
    if (value instanceof Promise && then === nativeThen) then.call(value, ok, failed);
    else new Promise<unknown>((r, j) => void then.call(value, r, j)).then(ok, failed);
  });
}

/**
 * One try of the tool under its timeout and the turn's cancellation. A tool that returns a plain
 * value (not a promise) settles at once, without a timer: a timer costs more than a small tool.
 */
export function runOnce(
  tool: AnyTool,
  call: ToolCall,
  input: unknown,
  turn: Pick<TurnInfo, 'turnId' | 'cancel'>,
  timeoutMs: number,
  deadline: number,
): RunOutcome | Promise<RunOutcome> {
  const { cancel } = turn;
  if (cancel.aborted) return CANCELLED_TRY;
  const abort = new ToolAbort();
  let value: unknown;
  let then: unknown;
  try {
    value = tool.execute(input, {
      get signal() {
        return abort.signal;
      },
      callId: call.id,
      turnId: turn.turnId,
    });
    // Read `then` once, as promise resolution would: a throwing getter is the tool's error.
    then =
      value !== null && (typeof value === 'object' || typeof value === 'function')
        ? (value as { then?: unknown }).then
        : undefined;
  } catch (error) {
    // A tool that cancelled the turn while it ran is reported as cancelled, not as an error.
    return cancel.aborted ? cancelledTry(abort, cancel) : { kind: 'error', error };
  }
  // A tool that returned a plain value has finished: its result is real even if the turn was
  // cancelled meanwhile (the side effect happened), so it is kept.
  if (typeof then !== 'function') return { kind: 'ok', value };
  if (cancel.aborted) {
    // The dropped promise may reject on abort: handle it so it is not an unhandled rejection.
    new Promise<unknown>((r, j) => void (then as ThenFn).call(value, r, j)).catch(() => undefined);
    return cancelledTry(abort, cancel);
  }
  return settleAgainst(value, then as ThenFn, tool, abort, cancel, timeoutMs, deadline);
}

const CANCELLED_TRY: RunOutcome = { kind: 'cancelled' };

/** A try the turn's cancellation ended: the tool's own signal is aborted with the turn's reason. */
function cancelledTry(abort: ToolAbort, cancel: Cancellation): RunOutcome {
  abort.abort(cancel.reason);
  return CANCELLED_TRY;
}

function shouldRetry(tool: AnyTool, error: unknown): boolean {
  try {
    return tool.retry?.retryOn?.(error) === true;
  } catch {
    return false;
  }
}

/** How the failed try `attempt` is retried: the tool's `retry` when its `retryOn` accepts the error, else by kind. */
function retryOf(tool: AnyTool, failure: Failure, policy: RetryPolicy): KindRetry | undefined {
  if (failure.kind !== 'timeout' && tool.retry !== undefined && shouldRetry(tool, failure.error))
    return { attempts: tool.retry.attempts, backoffMs: tool.retry.backoffMs, maxBackoffMs: MAX_TIMEOUT_MS };
  return retryFor(failure.kind, tool.retryPolicy, policy);
}

/** A failed try: its kind, and the thrown value (none for a timeout). */
interface Failure {
  readonly kind: ToolErrorKind;
  readonly error?: unknown;
}

/** What stage 7 runs with besides the call. */
export interface ExecuteOptions {
  readonly defaultTimeoutMs: number;
  readonly retryPolicy: RetryPolicy;
}

/** The text of a failed call: what failed, how many tries it took, and why it was not tried again. */
function failureText(name: string, failure: Failure, timeoutMs: number, attempts: number, note: string): string {
  const tries = attempts > 1 ? ` (${attempts} tries)` : '';
  if (failure.kind === 'timeout') return `Tool '${name}' timed out after ${timeoutMs} ms${tries}.${note}`;
  return `Error calling tool '${name}'${tries}: ${describeThrown(failure.error)}${note}`;
}

function failed(call: ToolCall, output: string, errorKind: ToolErrorKind, attempts: number): Executed {
  return { result: { callId: call.id, name: call.name, output, isError: true, errorKind }, attempts };
}

function cancelledDuring(call: ToolCall, attempts: number): Executed {
  return failed(call, `cancelled: ${quote(call.name)} was stopped because the turn was cancelled.`, 'cancelled', attempts);
}

/**
 * Stage 7: the tool's result, or an error result saying it threw, timed out or was cancelled,
 * with how many tries were made. A failure is tried again as its retry policy says (see
 * retry.ts). The timeout is one deadline for the whole call, every try and every wait included,
 * unless the tool opts in to retrying timeouts: then each try has the whole `timeoutMs`. A wait
 * that would pass the deadline is not waited: the call ends at once with its last failure. Between
 * two tries the dispatcher always yields at least one macrotask, so a tool that fails synchronously
 * cannot starve the timers of the timeout and the turn's cancel.
 */
export async function runTool(
  tool: AnyTool,
  call: ToolCall,
  input: unknown,
  turn: Pick<TurnInfo, 'turnId' | 'cancel'>,
  options: ExecuteOptions,
): Promise<Executed> {
  const timeoutMs = tool.timeoutMs ?? options.defaultTimeoutMs;
  const perTry = retryFor('timeout', tool.retryPolicy, options.retryPolicy) !== undefined;
  let deadline = performance.now() + timeoutMs;
  for (let attempt = 1; ; attempt++) {
    if (turn.cancel.aborted)
      return attempt === 1
        ? failed(call, `cancelled: the turn was cancelled before ${quote(call.name)} ran.`, 'cancelled', 0)
        : cancelledDuring(call, attempt - 1);
    if (perTry) deadline = performance.now() + timeoutMs;
    const tried = runOnce(tool, call, input, turn, timeoutMs, deadline);
    const outcome = tried instanceof Promise ? await tried : tried;
    if (outcome.kind === 'ok')
      return { result: { callId: call.id, name: call.name, output: outcome.value, isError: false }, attempts: attempt };
    if (outcome.kind === 'cancelled') return cancelledDuring(call, attempt);
    const failure: Failure =
      outcome.kind === 'timeout' ? { kind: 'timeout' } : { kind: kindOf(outcome.error).kind, error: outcome.error };
    const wait = nextWait(retryOf(tool, failure, options.retryPolicy), attempt, failure.error);
    if (wait === undefined) return failed(call, failureText(call.name, failure, timeoutMs, attempt, ''), failure.kind, attempt);
    const left = deadline - performance.now();
    if (!perTry && left <= 0)
      return failed(call, failureText(call.name, { kind: 'timeout' }, timeoutMs, attempt, ''), 'timeout', attempt);
    if (!perTry && wait >= left) {
      const note = ` (not tried again: the next try would start after the call's ${timeoutMs} ms timeout)`;
      return failed(call, failureText(call.name, failure, timeoutMs, attempt, note), failure.kind, attempt);
    }
    if (!(await sleep(Math.min(wait, MAX_TIMEOUT_MS), turn.cancel))) return cancelledDuring(call, attempt);
  }
}
