// Pipeline stage 7: run the tool under one deadline and the turn's cancellation, retrying thrown
// errors its `retryOn` accepts. The tool is user code: whatever it does (throw, hang, ignore its
// signal, reject after a cancel) becomes one RawResult, and no rejection is left unhandled.

import type { ToolCall } from '@turnkit/core';
import { delay } from '../abort.js';
import { MAX_TIMEOUT_MS, type AnyTool } from '../config.js';
import type { ToolContext } from '../define.js';
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

const CANCELLED_TRY: RunOutcome = { kind: 'cancelled' };

const promiseThen = Promise.prototype.then;

/**
 * The context a try hands the tool, with the tool's own signal made when the tool first reads it,
 * and `abort`, which aborts that signal (or the one a later read makes, already aborted) with the
 * first reason given. Not a second path: every tool gets the same context. Node 20 makes an
 * AbortSignal slowly (`createAbortSignal` was the largest entry of the bench turn's profile,
 * 12.9%), and most tools never read theirs: made on a read, `createAbortSignal` fell from 7.7% to
 * 3.1% of `agent.run`'s CPU profile (the turn's own signal is what is left) and its allocation from
 * 71.4 KB to 69.4 KB a turn (`node --cpu-prof`, V8's sampling heap profiler).
 */
function toolContext(
  call: ToolCall,
  turnId: string,
): { readonly context: ToolContext; readonly abort: (reason: unknown) => void } {
  let controller: AbortController | undefined;
  let aborted: { readonly reason: unknown } | undefined;
  const context: ToolContext = {
    callId: call.id,
    turnId,
    get signal(): AbortSignal {
      if (controller === undefined) {
        controller = new AbortController();
        if (aborted !== undefined) controller.abort(aborted.reason);
      }
      return controller.signal;
    },
  };
  const abort = (reason: unknown): void => {
    aborted ??= { reason };
    controller?.abort(reason);
  };
  return { context, abort };
}

/**
 * One try of the tool, settled by the first of: its result, the turn's signal, its deadline (a
 * `performance.now()` time). The tool gets a signal of its own (`toolContext`), aborted with the
 * turn's reason or with a TimeoutError; a tool that ignores it keeps running, and its late result
 * is dropped.
 */
export function runOnce(
  tool: AnyTool,
  call: ToolCall,
  input: unknown,
  turn: Pick<TurnInfo, 'turnId' | 'signal'>,
  timeoutMs: number,
  deadline: number,
): Promise<RunOutcome> {
  const { signal } = turn;
  if (signal.aborted) return Promise.resolve(CANCELLED_TRY);
  const { context, abort } = toolContext(call, turn.turnId);
  let work: Promise<unknown>;
  try {
    const value: unknown = tool.execute(input, context);
    // Read `then` once, as promise resolution would: a throwing getter is the tool's error.
    const then: unknown =
      value !== null && (typeof value === 'object' || typeof value === 'function')
        ? (value as { then?: unknown }).then
        : undefined;
    // A tool that returned a plain value has finished: its result is real even if the turn was
    // cancelled meanwhile (the side effect happened), so it is kept.
    if (typeof then !== 'function') return Promise.resolve({ kind: 'ok', value });
    // A native promise is awaited as it is; any other thenable through a promise, which calls
    // back once and takes a throw of its `then` as a rejection.
    work =
      then === promiseThen && value instanceof Promise
        ? value
        : new Promise((resolve, reject) => void then.call(value, resolve, reject));
  } catch (error) {
    // A tool that cancelled the turn while it ran is reported as cancelled, not as an error.
    if (!signal.aborted) return Promise.resolve({ kind: 'error', error });
    abort(signal.reason);
    return Promise.resolve(CANCELLED_TRY);
  }
  return new Promise<RunOutcome>((resolve) => {
    const settle = (outcome: RunOutcome): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', cancelled);
      resolve(outcome);
    };
    // Abort the tool's signal first, then settle: a tool that rejects on abort does so a
    // microtask later, so the call is reported as cancelled or timed out, not as an error.
    const cancelled = (): void => {
      abort(signal.reason);
      settle(CANCELLED_TRY);
    };
    const timer = setTimeout(
      () => {
        abort(new DOMException(`Tool '${tool.name}' timed out after ${timeoutMs} ms.`, 'TimeoutError'));
        settle({ kind: 'timeout' });
      },
      Math.max(0, deadline - performance.now()),
    );
    signal.addEventListener('abort', cancelled, { once: true });
    try {
      promiseThen.call(
        work,
        (value) => settle({ kind: 'ok', value }),
        (error: unknown) => settle({ kind: 'error', error }),
      );
    } catch (error) {
      // Not a promise after all (an object that only pretends to be one): the tool's error.
      settle({ kind: 'error', error });
    }
    if (signal.aborted) cancelled();
  });
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
  turn: Pick<TurnInfo, 'turnId' | 'signal'>,
  options: ExecuteOptions,
): Promise<Executed> {
  const timeoutMs = tool.timeoutMs ?? options.defaultTimeoutMs;
  const perTry = retryFor('timeout', tool.retryPolicy, options.retryPolicy) !== undefined;
  let deadline = performance.now() + timeoutMs;
  for (let attempt = 1; ; attempt++) {
    if (turn.signal.aborted)
      return attempt === 1
        ? failed(call, `cancelled: the turn was cancelled before ${quote(call.name)} ran.`, 'cancelled', 0)
        : cancelledDuring(call, attempt - 1);
    if (perTry) deadline = performance.now() + timeoutMs;
    const outcome = await runOnce(tool, call, input, turn, timeoutMs, deadline);
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
    if (!(await delay(Math.min(wait, MAX_TIMEOUT_MS), turn.signal))) return cancelledDuring(call, attempt);
  }
}
