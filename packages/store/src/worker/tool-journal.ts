// Tool calls with a journal: each call is journaled as started before its tool runs and its result
// is written the moment it finishes. A batch re-issued after a crash answers journaled calls from
// the journal and never runs a started call again (it gets an `interrupted` result) unless its
// tool is `idempotent`. Each of these choices is the protocol's (the fence's `decide`).

import { definedProps } from '@turnkit/core/internal';
import type { CallRecord, ToolCall, ToolResult, TurnEvent } from '@turnkit/core';
import type { Dispatcher, ToolDefinition } from '@turnkit/dispatch';
import type { DispatchContext } from '@turnkit/dispatch/internal';
import type { HandlerContext } from '@turnkit/inline/driver';
import { crashArmed, crashPoint, TOOL_RUNNING_MS } from '../crash.js';
import { messageOf } from '../errors.js';
import type { Fence } from './fence.js';
import { journalNeedsRead } from './protocol.js';

export const INTERRUPTED =
  'interrupted: the worker running this call stopped before it reported a result, and the tool is not marked idempotent, so it was not run again.';

interface ToolContext {
  readonly callId: string;
  readonly signal: AbortSignal;
  readonly turnId: string;
}

/** A call's journal key from its id: the id itself, or for a child turn's call the key tree.ts makes. */
export type KeyOf = (callId: string) => string;

const ownKey: KeyOf = (callId) => callId;

/** The agent's tools, each journaling its call (under `keyOf` its id) as started before it runs. */
// any: each tool has its own input type.
export function journalingTools(
  tools: readonly ToolDefinition<any>[],
  fence: Fence,
  keyOf: KeyOf = ownKey,
): ToolDefinition<any>[] {
  return tools.map((tool) => ({
    ...tool,
    async execute(input: unknown, toolCtx: ToolContext) {
      try {
        await startCall(fence, { id: keyOf(toolCtx.callId), name: tool.name });
      } catch (error) {
        throw new Error(`the call was not started: its start could not be journaled (${messageOf(error)})`);
      }
      const running = Promise.resolve(tool.execute(input, toolCtx));
      if (crashArmed('tool_running')) {
        const timer = setTimeout(() => crashPoint('tool_running'), TOOL_RUNNING_MS);
        void running.finally(() => clearTimeout(timer)).catch(() => undefined);
      }
      return running;
    },
  }));
}

/** Journals a call as started, if the protocol lets it run; throws when the turn left this worker. */
async function startCall(fence: Fence, call: { readonly id: string; readonly name: string }): Promise<void> {
  for (const effect of fence.decide({ type: 'call_starting', callId: call.id })) {
    if (effect.type === 'journal_start') await fence.write(() => fence.store.callStarted(fence.fencedLease(effect.token), call));
    // The batch's state, deferred until now, and this start in one statement.
    if (effect.type === 'commit_with_start') {
      await fence.writeDeferred(effect.token, effect.applied, call);
      crashPoint('dispatching_persisted');
    }
  }
  if (!fence.decide({ type: 'start_journaled', callId: call.id }).some((e) => e.type === 'run_tool')) fence.check();
}

/** Splits a batch: results the journal holds (with `interrupted` for started, non-idempotent calls) and calls to run. */
async function fromJournal(
  calls: readonly ToolCall[],
  fence: Fence,
  idempotent: ReadonlySet<string>,
  keyOf: KeyOf,
): Promise<{ known: ToolResult[]; toRun: ToolCall[] }> {
  const { store, lease } = fence;
  // The batch of a deferred state has no journal rows yet (the protocol's journalNeedsRead): nothing to read.
  const { results, started } = journalNeedsRead(fence.hold)
    ? await fence.write(() =>
        store.journal(
          lease,
          calls.map((c) => keyOf(c.id)),
        ),
      )
    : { results: [], started: [] };
  // Keyed by journal key; each result goes back to core with its call's own id.
  const byId = new Map(calls.map((c) => [keyOf(c.id), c]));
  const known = new Map(
    results.flatMap((r) => {
      const call = byId.get(r.callId);
      return call === undefined ? [] : [[r.callId, r.callId === call.id ? r : { ...r, callId: call.id }] as const];
    }),
  );
  const toRun: ToolCall[] = [];
  const effects = fence.decide({
    type: 'journal_read',
    calls: calls.map((c) => ({ id: keyOf(c.id), idempotent: idempotent.has(c.name) })),
    results: [...known.keys()],
    started,
  });
  for (const effect of effects) {
    if (effect.type === 'stop') fence.check();
    if (effect.type === 'write_deferred') await fence.writeDeferred(effect.token, effect.applied);
    const call = 'callId' in effect ? byId.get(effect.callId) : undefined;
    if (call === undefined) continue;
    if (effect.type === 'run_call') toRun.push(call);
    else if (effect.type === 'write_interrupted') {
      const result: ToolResult = { callId: call.id, name: call.name, output: INTERRUPTED, isError: true };
      await fence.write(() => store.callFinished(fence.fencedLease(effect.token), { ...result, callId: effect.callId }));
      known.set(effect.callId, result);
    }
  }
  return { known: calls.flatMap((c) => known.get(keyOf(c.id)) ?? []), toRun };
}

/**
 * Runs a batch (`dispatch_tools`, or `execute_approved` when `approved`) through the dispatcher,
 * writing each result as it finishes; returns the event for core.
 */
export async function runJournaledBatch(
  calls: readonly ToolCall[],
  approved: boolean,
  ctx: HandlerContext,
  fence: Fence,
  dispatcher: Dispatcher,
  idempotent: ReadonlySet<string>,
  keyOf: KeyOf = ownKey,
): Promise<TurnEvent> {
  const { known, toRun } = await fromJournal(calls, fence, idempotent, keyOf);
  const writes: Promise<unknown>[] = [];
  const onResult = (result: ToolResult): void => {
    const key = keyOf(result.callId);
    // A turn this worker no longer holds keeps no result from here (a call cut short is `interrupted` on recovery).
    const effects = fence.decide({ type: 'tool_finished', callId: key });
    // The batch's deferred state first (a call answered without running, before any call started).
    const deferred = effects.find((e) => e.type === 'write_deferred');
    const state = deferred === undefined ? null : fence.writeDeferred(deferred.token, deferred.applied);
    for (const effect of effects) {
      if (effect.type !== 'write_result') continue;
      const written = Promise.resolve(state)
        .then(() =>
          fence.write(() =>
            fence.store.callFinished(
              fence.fencedLease(effect.token),
              key === result.callId ? result : { ...result, callId: key },
            ),
          ),
        )
        .then(
          (first) => first && crashPoint('tool_result_written'),
          // The fence is tripped: the batch ends with fence.check() below.
          () => undefined,
        );
      writes.push(written);
    }
  };
  // The batch's audit records ride on the event, as in @turnkit/inline (core emits hook_blocked from them).
  const records: CallRecord[] = [];
  const dispatchCtx: DispatchContext = {
    turnId: ctx.turnId,
    signal: fence.cancellation.signal,
    onResult,
    onRecord: (record) => records.push(record),
    transcript: ctx.transcript,
    ...definedProps({ context: ctx.context }),
  };
  const audit = (): { records?: CallRecord[] } => (records.length === 0 ? {} : { records });
  if (approved) {
    const ran = toRun.length === 0 ? [] : await dispatcher.executeApproved(toRun, dispatchCtx);
    await Promise.all(writes);
    fence.check();
    return { type: 'approved_tools_completed', results: [...known, ...ran], ...audit() };
  }
  const outcome = toRun.length === 0 ? { results: [], parked: [] } : await dispatcher.dispatch(toRun, dispatchCtx);
  await Promise.all(writes);
  fence.check();
  const held = [...known, ...outcome.results];
  return outcome.parked.length > 0
    ? { type: 'tools_parked', held, parked: outcome.parked, ...audit() }
    : { type: 'tools_completed', results: held, ...audit() };
}
