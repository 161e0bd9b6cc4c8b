// Observers of one activation: each time a worker runs a turn (claim to park, end or hand-back),
// an agent's `observe` is asked for hooks for that run. What the observer's `traceContext()` says
// is saved with the turn and handed to the next activation, in whichever worker or process runs
// it, so a turn parked for a day is still one story in a trace viewer (@turnkit/otel's
// `traceTurn` returns such an observer). Observers are the user's code: a fault in one never
// reaches the turn (the driver swallows hook faults; `observe`, `traceContext` and `end` faults go
// to the worker's `onError`).

import type { Effect, Message, TraceEntry } from '@turnkit/core';
import type { ExecutionWrapper } from '@turnkit/dispatch/internal';
import { messageOf } from '../errors.js';

/** What an agent's `observe` is told when a worker starts running one of its turns. */
export interface StoredActivation {
  /** The turn the worker runs. */
  readonly turnId: string;
  /** The turn's agent. */
  readonly agent: string;
  /**
   * What the previous activation's `traceContext()` returned, read back from the database
   * (untrusted: check it before use, as @turnkit/otel's `readTraceContext` does); null on the first.
   */
  readonly traceContext: unknown;
  /** The turn's messages so far. */
  readonly transcript: readonly Message[];
}

/** How an activation left the worker (the turn's own status when it ended). */
export type ActivationStatus = 'stopped' | 'failed' | 'cancelled' | 'suspended' | 'waiting_retry' | 'handed_back' | 'lost';

/** Hooks for one activation. Every member is optional. */
export interface ActivationObserver {
  /** Observers of this activation's run: its effects, its transitions, and a wrapper around every tool execution. */
  readonly hooks?: {
    /** Sees each effect before the worker performs it. */
    readonly onEffect?: (effect: Effect) => void;
    /** Sees each transition. */
    readonly onStep?: (record: TraceEntry) => void;
    /** Runs around every tool execution (the dispatcher's `wrapExecution`). */
    readonly wrapExecution?: ExecutionWrapper;
  };
  /** Plain JSON (at most 4 KB as JSON) saved with the turn at its next write; the next activation receives it. */
  traceContext?(): unknown;
  /** The activation is over; `suspended` means the turn waits for a decision. */
  end?(result: { readonly status: ActivationStatus }): void;
}

/**
 * Asks an agent's `observe` for this activation's observer: null without `observe`, when it
 * returns no object, or when it throws (reported, and the turn runs without an observer). The
 * worker and `turnkit run` / `turnkit resume` (a turn run in the CLI's process) both ask through it.
 */
export function startObserver(
  observe: ((activation: StoredActivation) => ActivationObserver) | undefined,
  activation: StoredActivation,
  report: (e: Error) => void,
): ActivationObserver | null {
  if (observe === undefined) return null;
  try {
    const observer = observe(activation);
    return observer !== null && typeof observer === 'object' ? observer : null;
  } catch (error) {
    report(new Error(`Agent '${activation.agent}': observe threw (${messageOf(error)}); the turn runs without its observer.`));
    return null;
  }
}

/** The most a saved trace context may take, as JSON. */
export const MAX_TRACE_CONTEXT = 4096;

/** The observer's trace context as JSON text to save, or undefined (none, unchanged, or unusable: reported). */
export function traceContextText(
  observer: ActivationObserver | null,
  saved: string | null,
  report: (e: Error) => void,
): string | undefined {
  if (observer?.traceContext === undefined) return undefined;
  let text: string | undefined;
  try {
    text = JSON.stringify(observer.traceContext());
  } catch (error) {
    report(
      new Error(
        `observe: traceContext() failed or is not JSON (${error instanceof Error ? error.message : String(error)}); it was not saved.`,
      ),
    );
    return undefined;
  }
  if (text === undefined || text === saved) return undefined;
  if (text.length > MAX_TRACE_CONTEXT) {
    report(
      new Error(
        `observe: traceContext() returned ${text.length} characters of JSON, more than ${MAX_TRACE_CONTEXT}; it was not saved.`,
      ),
    );
    return undefined;
  }
  return text;
}
