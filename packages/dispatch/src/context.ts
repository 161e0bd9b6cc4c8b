// The caller's context, read once per dispatcher method call: its turn id, its result observer,
// and its AbortSignal. Reading never throws: a context that cannot be read gives the reason
// instead, and the pipeline fails every call of it.

import type { ApprovalDecision, CallRecord, Message, ToolResult } from '@turnkit/core';
import { errorMessage, isJsonValue, readDecision, type JsonObject } from '@turnkit/core/internal';
import { quote } from './text.js';

/** What the dispatcher takes from a `DispatchContext`, read once: nothing of the caller's is read again. */
export interface Turn {
  readonly turnId: string;
  /** The session a person's grants belong to; undefined: they belong to the turn. */
  readonly session?: string | undefined;
  /** Valid decisions given up front, by call id. */
  readonly decisions?: ReadonlyMap<string, ApprovalDecision> | undefined;
  /** The caller's signal; without one, a signal that never aborts. */
  readonly signal: AbortSignal;
  readonly onResult: ((result: ToolResult) => void) | undefined;
  readonly onRecord: ((record: CallRecord) => void) | undefined;
  /** The dispatcher's context with the caller's over it, frozen. */
  readonly context: JsonObject;
  /** A frozen copy of the caller's transcript, made when first read. */
  readonly transcript: () => readonly Message[];
  /** Why the context could not be read; then nothing may run, and every call gets an error result. */
  readonly problem?: string;
}

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

/** The caller's signal, checked: a value that is not an AbortSignal (a look-alike, a Proxy of one) is refused. */
function readSignal(given: unknown): AbortSignal {
  if (given === undefined || given === null) return new AbortController().signal;
  // Reading `aborted` checks the brand: a Proxy of a real signal passes `instanceof` and throws here.
  if (!(given instanceof AbortSignal) || typeof given.aborted !== 'boolean') throw new TypeError('signal must be an AbortSignal');
  return given;
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

function emptyTurn(context: JsonObject, problem?: string): Turn {
  const turn: Turn = {
    turnId: '',
    signal: new AbortController().signal,
    onResult: undefined,
    onRecord: undefined,
    context,
    transcript: () => NO_MESSAGES,
  };
  return problem === undefined ? turn : { ...turn, problem };
}

/**
 * Reads a `DispatchContext` once, defensively: its `turnId`, `session`, `decisions`, `signal`,
 * `onResult`, `onRecord`, `context` (over `baseContext`, the dispatcher's) and `transcript`. A
 * context that throws when read (a Proxy, a throwing getter, a signal that is not an AbortSignal)
 * gives a turn with the reason as its `problem`. Not an object: an empty context.
 */
export function readContext(ctx: unknown, baseContext: JsonObject): Turn {
  if (ctx === null || typeof ctx !== 'object') return emptyTurn(baseContext);
  const c = ctx as Record<string, unknown>;
  try {
    const rawTurnId = c['turnId'];
    const turnId = typeof rawTurnId === 'string' ? rawTurnId : String(rawTurnId);
    const rawSession = c['session'];
    const decisions = readDecisions(c['decisions']);
    const rawOnResult = c['onResult'];
    const rawOnRecord = c['onRecord'];
    const context = mergedContext(baseContext, c['context']);
    const transcript = transcriptView(c['transcript']);
    const signal = readSignal(c['signal']);
    return {
      turnId,
      session: typeof rawSession === 'string' ? rawSession : undefined,
      decisions,
      signal,
      onResult: typeof rawOnResult === 'function' ? (rawOnResult as (result: ToolResult) => void) : undefined,
      onRecord: typeof rawOnRecord === 'function' ? (rawOnRecord as (record: CallRecord) => void) : undefined,
      context,
      transcript,
    };
  } catch (error) {
    return emptyTurn(baseContext, errorMessage(error));
  }
}

export function badContextText(name: string, problem: string): string {
  return `Call to ${quote(name)} not run: the dispatch context could not be read (${problem}). The program calling the dispatcher must pass a plain { turnId, signal?, context?, transcript? } object.`;
}
