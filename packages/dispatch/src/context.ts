// The caller's context, read once per dispatcher method call: its turn id, its result observer,
// and its cancellation, mirrored into one of the dispatcher's own. Reading never throws: a context
// that cannot be read gives the reason instead, and the pipeline fails every call of it.

import { readDecision, type ApprovalDecision, type ToolResult } from '@turnkit/core';
import { LazyCancellation, type Cancellation } from './cancellation.js';
import { errorMessage, quote } from './text.js';

/** What the dispatcher takes from a `DispatchContext`, read once: nothing of the caller's is read again. */
export interface Turn {
  readonly turnId: string;
  /** The session a person's grants belong to; undefined: they belong to the turn. */
  readonly session?: string | undefined;
  /** Valid decisions given up front, by call id. */
  readonly decisions?: ReadonlyMap<string, ApprovalDecision> | undefined;
  /** The dispatcher's own cancellation, aborted when the caller's is. */
  readonly cancel: Cancellation;
  readonly onResult: ((result: ToolResult) => void) | undefined;
  /** Unsubscribes from the caller's cancellation; call when the work is done. */
  readonly release: () => void;
  /** Why the context could not be read; then nothing may run, and every call gets an error result. */
  readonly problem?: string;
}

function noop(): void {}

/**
 * Reads a `DispatchContext` once, defensively: its `turnId`, `onResult`, and its `cancellation`
 * (or, without one, its `signal`), mirrored into a cancellation of the dispatcher's own. A context
 * that throws when read (a Proxy, a throwing getter, a signal that is not an AbortSignal) gives
 * a turn with the reason as its `problem`. Not an object: an empty context.
 */
export function readContext(ctx: unknown): Turn {
  if (ctx === null || typeof ctx !== 'object')
    return { turnId: '', cancel: new LazyCancellation(), onResult: undefined, release: noop };
  const own = new LazyCancellation();
  let release: () => void = noop;
  try {
    const c = ctx as Record<string, unknown>;
    const rawTurnId = c['turnId'];
    const turnId = typeof rawTurnId === 'string' ? rawTurnId : String(rawTurnId);
    const rawSession = c['session'];
    const session = typeof rawSession === 'string' ? rawSession : undefined;
    const decisions = readDecisions(c['decisions']);
    const rawOnResult = c['onResult'];
    const onResult = typeof rawOnResult === 'function' ? (rawOnResult as (result: ToolResult) => void) : undefined;
    // A usable `cancellation` is preferred: reading `signal` may make an AbortSignal for nothing.
    const given = c['cancellation'] as { aborted?: unknown; reason?: unknown; onAbort?: unknown } | null | undefined;
    if (given !== null && typeof given === 'object' && typeof given.onAbort === 'function') {
      if (given.aborted === true) own.abort(reasonOf(given));
      else {
        const remove: unknown = (given.onAbort as (listener: () => void) => unknown).call(given, () =>
          own.abort(reasonOf(given)),
        );
        if (typeof remove === 'function') release = () => void (remove as () => unknown).call(undefined);
      }
    } else {
      const signal = c['signal'] as AbortSignal | null | undefined;
      if (signal !== undefined && signal !== null) {
        if (signal.aborted) own.abort(reasonOf(signal));
        else {
          const listener = (): void => own.abort(reasonOf(signal));
          signal.addEventListener('abort', listener, { once: true });
          release = () => signal.removeEventListener('abort', listener);
        }
      }
    }
    return { turnId, session, decisions, cancel: own, onResult, release: () => safely(release) };
  } catch (error) {
    safely(release);
    return { turnId: '', cancel: own, onResult: undefined, release: noop, problem: errorMessage(error) };
  }
}

/** The valid entries of a context's up-front decisions, read once; an invalid entry decides nothing. */
function readDecisions(value: unknown): ReadonlyMap<string, ApprovalDecision> | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const out = new Map<string, ApprovalDecision>();
  for (const [callId, decision] of Object.entries(value)) {
    const read = readDecision(decision);
    if (read !== null) out.set(callId, read);
  }
  return out.size === 0 ? undefined : out;
}

/** A cancellation's reason, read when it fires; one that throws when read is no reason. */
function reasonOf(source: { readonly reason?: unknown }): unknown {
  try {
    return source.reason;
  } catch {
    return undefined;
  }
}

function safely(fn: () => void): void {
  try {
    fn();
  } catch {
    // The caller's own code failed while being unsubscribed from; nothing is left to undo.
  }
}

export function badContextText(name: string, problem: string): string {
  return `Call to ${quote(name)} not run: the dispatch context could not be read (${problem}). The program calling the dispatcher must pass a plain { turnId, signal? } object.`;
}
