// The caller's context, read once per dispatcher method call: its turn id, its result observer,
// and its cancellation, mirrored into one of the dispatcher's own. Reading never throws: a context
// that cannot be read gives the reason instead, and the pipeline fails every call of it.

import { isJsonValue, readDecision, type JsonObject } from '@turnkit/core/internal';
import type { ApprovalDecision, Message, ToolResult } from '@turnkit/core';
import { LazyCancellation, type Cancellation } from './cancellation.js';
import { errorMessage, quote } from './text.js';
import type { CallRecord } from './types.js';

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
  readonly onRecord: ((record: CallRecord) => void) | undefined;
  /** The dispatcher's context with the caller's over it, frozen. */
  readonly context: JsonObject;
  /** A frozen copy of the caller's transcript, made when first read. */
  readonly transcript: () => readonly Message[];
  /** Unsubscribes from the caller's cancellation; call when the work is done. */
  readonly release: () => void;
  /** Why the context could not be read; then nothing may run, and every call gets an error result. */
  readonly problem?: string;
}

/** The `release` of a turn that holds nothing of the caller's to let go of. */
export function releaseNothing(): void {}

const NO_MESSAGES: readonly Message[] = Object.freeze([]);

/** Freezes a JSON value and everything in it. */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object') {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

/** A read-only view of the caller's transcript: a frozen copy, made once, when a hook or policy first reads it. */
function transcriptView(given: unknown): () => readonly Message[] {
  if (given === undefined) return () => NO_MESSAGES;
  if (!Array.isArray(given)) throw new TypeError('transcript must be an array of messages');
  let view: readonly Message[] | undefined;
  return () => {
    view ??= deepFreeze(structuredClone(given) as Message[]);
    return view;
  };
}

/** The dispatcher's context with the caller's over it; a caller's context that is not a JSON object is refused. */
function mergedContext(base: JsonObject, given: unknown): JsonObject {
  if (given === undefined) return base;
  if (given === null || typeof given !== 'object' || Array.isArray(given) || !isJsonValue(given))
    throw new TypeError('context must be a JSON object, like { sessionId, userId, cwd }');
  return deepFreeze(structuredClone({ ...base, ...(given as JsonObject) }));
}

function emptyTurn(cancel: Cancellation, context: JsonObject, problem?: string): Turn {
  const turn: Turn = {
    turnId: '',
    cancel,
    onResult: undefined,
    onRecord: undefined,
    context,
    transcript: () => NO_MESSAGES,
    release: releaseNothing,
  };
  return problem === undefined ? turn : { ...turn, problem };
}

/**
 * Reads a `DispatchContext` once, defensively: its `turnId`, `onResult`, `onRecord`, `context` (over
 * `baseContext`, the dispatcher's), `transcript`, and its `cancellation`
 * (or, without one, its `signal`), mirrored into a cancellation of the dispatcher's own. A context
 * that throws when read (a Proxy, a throwing getter, a signal that is not an AbortSignal) gives
 * a turn with the reason as its `problem`. Not an object: an empty context.
 */
export function readContext(ctx: unknown, baseContext: JsonObject): Turn {
  if (ctx === null || typeof ctx !== 'object') return emptyTurn(new LazyCancellation(), baseContext);
  const c = ctx as Record<string, unknown>;
  let given: unknown;
  try {
    given = c['cancellation'];
  } catch (error) {
    return emptyTurn(new LazyCancellation(), baseContext, errorMessage(error));
  }
  // A cancellation of this module's own (an interpreter's turn) needs no mirror: nothing but its
  // owner can abort it, and reading it runs no one's code.
  return readTurn(c, baseContext, given, LazyCancellation.is(given));
}

/** `readContext` once `cancellation` is read: `shared` when it is used as the dispatcher's own. */
function readTurn(c: Record<string, unknown>, baseContext: JsonObject, given: unknown, shared: boolean): Turn {
  const own = shared ? (given as LazyCancellation) : new LazyCancellation();
  let release: () => void = releaseNothing;
  try {
    const rawTurnId = c['turnId'];
    const turnId = typeof rawTurnId === 'string' ? rawTurnId : String(rawTurnId);
    const rawSession = c['session'];
    const session = typeof rawSession === 'string' ? rawSession : undefined;
    const decisions = readDecisions(c['decisions']);
    const rawOnResult = c['onResult'];
    const onResult = typeof rawOnResult === 'function' ? (rawOnResult as (result: ToolResult) => void) : undefined;
    const rawOnRecord = c['onRecord'];
    const onRecord = typeof rawOnRecord === 'function' ? (rawOnRecord as (record: CallRecord) => void) : undefined;
    const context = mergedContext(baseContext, c['context']);
    const transcript = transcriptView(c['transcript']);
    // A usable `cancellation` is preferred: reading `signal` may make an AbortSignal for nothing.
    const cancellation = given as { aborted?: unknown; reason?: unknown; onAbort?: unknown } | null | undefined;
    if (shared) {
      // Already the dispatcher's own: nothing to mirror or release.
    } else if (cancellation !== null && typeof cancellation === 'object' && typeof cancellation.onAbort === 'function') {
      if (cancellation.aborted === true) own.abort(reasonOf(cancellation));
      else {
        const remove: unknown = (cancellation.onAbort as (listener: () => void) => unknown).call(cancellation, () =>
          own.abort(reasonOf(cancellation)),
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
    const unsubscribe = release;
    return {
      turnId,
      session,
      decisions,
      cancel: own,
      onResult,
      onRecord,
      context,
      transcript,
      release: unsubscribe === releaseNothing ? releaseNothing : () => safely(unsubscribe),
    };
  } catch (error) {
    safely(release);
    return emptyTurn(own, baseContext, errorMessage(error));
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
  return `Call to ${quote(name)} not run: the dispatch context could not be read (${problem}). The program calling the dispatcher must pass a plain { turnId, signal?, context?, transcript? } object.`;
}
