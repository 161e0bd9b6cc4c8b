// Pipeline stage 4 (before-hooks) and the second half of stage 8 (after-hooks). Hooks are user
// code: each runs under the turn's cancellation and inside a `try`. Failing closed: a before-hook
// that fails denies the call; an after-hook that fails withholds the output.

import type { Message, ToolCall } from '@turnkit/core';
import { errorMessage, type JsonObject } from '@turnkit/core/internal';
import type { AnyTool } from '../config.js';
import { CANCELLED, unlessAborted } from '../abort.js';
import { deny, type Denial } from '../results.js';
import { quote } from '../text.js';
import type { AfterHook, BeforeHook, CallInfo, RawResult } from '../types.js';
import { validate } from './normalise.js';

/** A call with its tool and validated input. */
export interface Subject {
  readonly call: ToolCall;
  readonly tool: AnyTool;
  readonly input: unknown;
}

/** The turn as the stages that run user code see it. */
export interface TurnInfo {
  readonly turnId: string;
  readonly signal: AbortSignal;
  readonly context: JsonObject;
  readonly transcript: () => readonly Message[];
}

/** A call as hooks and policies see it; the transcript's copy is made only if one of them reads it. */
export function callInfo({ call, tool, input }: Subject, { turnId, signal, context, transcript }: TurnInfo): CallInfo {
  return {
    call,
    tool,
    input,
    turnId,
    context,
    signal,
    get transcript() {
      return transcript();
    },
  };
}

/** The denial of a call the turn's cancellation stopped before it ran. */
export function cancelledBefore(call: ToolCall): Denial {
  return deny(call, 'cancelled', `cancelled: the turn was cancelled before ${quote(call.name)} ran.`, 'cancelled');
}

/** What the before-hooks leave: the validated input, the value it was parsed from, and the hook that pre-approved it. */
export interface Hooked {
  readonly kind: 'ok';
  readonly input: unknown;
  /** What the tool's schema parsed into `input`: the call's own input, or the last rewrite as the hook returned it. */
  readonly raw: unknown;
  readonly approvedBy?: string;
}

/** One before-hook's answer: the input to go on with, or a denial. */
async function beforeHook(
  hook: BeforeHook,
  subject: Subject,
  turn: TurnInfo,
): Promise<{ readonly kind: 'ok'; readonly input: unknown; readonly raw?: unknown; readonly approve?: true } | Denial> {
  const { call, tool, input } = subject;
  const source = `hook:${hook.name}`;
  const refused = (why: string): Denial =>
    deny(call, source, `Call to ${quote(call.name)} denied: before-hook '${hook.name}' ${why}`, 'denied');
  let outcome: unknown;
  try {
    outcome = await unlessAborted(() => hook.run(callInfo(subject, turn)), turn.signal);
  } catch (error) {
    return refused(`failed (${errorMessage(error)}). Do not retry it unchanged.`);
  }
  if (outcome === CANCELLED) return cancelledBefore(call);
  const o = outcome as { kind?: unknown; input?: unknown; output?: unknown; isError?: unknown } | null | undefined;
  if (o === undefined || (o !== null && typeof o === 'object' && o.kind === 'continue')) return { kind: 'ok', input };
  if (o !== null && typeof o === 'object' && o.kind === 'rewrite' && 'input' in o) {
    const again = await validate(tool, call.name, o.input);
    return again.ok
      ? { kind: 'ok', input: again.input, raw: o.input }
      : refused(`rewrote its input into an invalid one. ${again.text}`);
  }
  if (o !== null && typeof o === 'object' && o.kind === 'approve') return { kind: 'ok', input, approve: true };
  if (o !== null && typeof o === 'object' && o.kind === 'halt' && (o.isError === undefined || typeof o.isError === 'boolean')) {
    const isError = o.isError ?? true;
    const result: RawResult = { callId: call.id, name: call.name, output: o.output, isError };
    return { kind: 'deny', source, result: isError ? { ...result, errorKind: 'denied' } : result };
  }
  return refused('returned an unrecognised value. Do not retry it unchanged.');
}

/**
 * Stage 4: the before-hooks in order, each seeing the input the previous one left. A rewritten
 * input is validated again. Gives the final input (and the hook that last pre-approved the call),
 * or the first denial (`hook:<name>`, `cancelled`).
 */
export async function runBeforeHooks(hooks: readonly BeforeHook[], subject: Subject, turn: TurnInfo): Promise<Hooked | Denial> {
  let input = subject.input;
  let raw: unknown = subject.call.input;
  let approvedBy: string | undefined;
  for (const hook of hooks) {
    if (turn.signal.aborted) return cancelledBefore(subject.call);
    const outcome = await beforeHook(hook, { ...subject, input }, turn);
    if (outcome.kind === 'deny') return outcome;
    input = outcome.input;
    if ('raw' in outcome) raw = outcome.raw;
    if (outcome.approve === true) approvedBy = hook.name;
  }
  return approvedBy === undefined ? { kind: 'ok', input, raw } : { kind: 'ok', input, raw, approvedBy };
}

/** What an after-hook's answer does to `current`, or the reason it cannot be used. */
function applyAfter(current: RawResult, outcome: unknown): RawResult | 'unrecognised' {
  if (outcome === undefined) return current;
  const o = outcome as { output?: unknown; isError?: unknown; stop?: { reason?: unknown } | null } | null;
  if (o === null || typeof o !== 'object') return 'unrecognised';
  const badStop = o.stop !== undefined && (o.stop === null || typeof o.stop !== 'object' || typeof o.stop.reason !== 'string');
  if ((o.isError !== undefined && typeof o.isError !== 'boolean') || badStop) return 'unrecognised';
  const { errorKind, ...rest } = current;
  const isError = typeof o.isError === 'boolean' ? o.isError : current.isError;
  return {
    ...rest,
    ...('output' in o ? { output: o.output } : {}),
    isError,
    // A hook that turns a success into an error makes it a tool error; one that clears the error clears its kind.
    ...(isError ? { errorKind: errorKind ?? 'tool_error' } : {}),
    ...(o.stop !== undefined && o.stop !== null ? { stop: { reason: String(o.stop.reason) } } : {}),
  };
}

/**
 * Stage 8, second half: the after-hooks in order, each seeing the result the previous one left.
 * A hook that throws, answers garbage or is cut off by the turn's cancellation withholds the output.
 */
export async function runAfterHooks(
  hooks: readonly AfterHook[],
  result: RawResult,
  info: CallInfo,
  signal: AbortSignal,
): Promise<RawResult> {
  let current = result;
  for (const hook of hooks) {
    const withheld = (why: string): RawResult => ({
      ...current,
      output: `The result of ${quote(info.call.name)} was withheld: after-hook '${hook.name}' ${why}. The tool did run; do not assume it failed or succeeded.`,
      isError: true,
      errorKind: 'withheld',
    });
    let outcome: unknown;
    try {
      outcome = await unlessAborted(() => hook.run(current, info), signal);
    } catch (error) {
      current = withheld(`failed (${errorMessage(error)})`);
      continue;
    }
    const next = outcome === CANCELLED ? withheld('did not finish because the turn was cancelled') : applyAfter(current, outcome);
    current = next === 'unrecognised' ? withheld('returned an unrecognised value') : next;
  }
  return current;
}
