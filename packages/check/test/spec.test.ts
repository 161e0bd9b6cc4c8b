// The reader-level spec and the real reducer agree: every shortest path of `turnSpec`, extended by
// every event the spec allows at its end, is replayed against `step` with a matching concrete
// event per step, and the statuses (and substates) must match after every step.

import { describe, expect, it } from 'vitest';
import { createActor } from 'xstate';
import { getShortestPaths } from 'xstate/graph';
import { createTurn, step, type TurnEvent, type TurnLimitsInput, type TurnState } from '@turnkit/core';
import { turnSpec } from '@turnkit/check';
import type { TurnSpecEvent } from '../src/spec.ts';
import { testLog } from '../../../test-log.ts';

type SpecType = TurnSpecEvent['type'];

const ALL_EVENTS: SpecType[] = [
  'START',
  'REPLY_TEXT',
  'REPLY_TOOLS',
  'REPLY_REPEATED',
  'REPLY_OVER_BUDGET',
  'REPLY_BAD_ID',
  'REPLY_FINAL',
  'MODEL_FAILED',
  'TOOLS_DONE',
  'TOOLS_STOP',
  'TOOLS_PARKED',
  'TOOLS_INCOMPLETE',
  'TOOLS_DELEGATE',
  'CHILD_DONE',
  'APPROVE',
  'REJECT',
  'EXPIRE',
  'APPROVED_DONE',
  'COMPACTED',
  'COMPACTED_AT_LIMIT',
  'COMPACTED_OVER_BUDGET',
  'ACCEPT',
  'REPAIR',
  'REJECT_NO_REPAIRS',
  'CANCEL',
  'MALFORMED',
];

/**
 * The spec leaves counters out, so each path gets limits under which its guards hold: the
 * iteration limit falls exactly at a COMPACTED_AT_LIMIT, the tool-call budget exactly at a
 * COMPACTED_OVER_BUDGET, and there are exactly as many repairs as REPAIR events.
 */
function limitsFor(path: readonly SpecType[]): TurnLimitsInput {
  let rounds = 0;
  let toolCalls = 0;
  let repairs = 0;
  let maxIterations = 50;
  let maxToolCalls: number | undefined;
  for (const type of path) {
    if (type === 'REPLY_TOOLS') toolCalls += 1;
    if (type === 'TOOLS_DONE' || type === 'REJECT' || type === 'EXPIRE' || type === 'APPROVED_DONE' || type === 'CHILD_DONE')
      rounds += 1;
    if (type === 'COMPACTED_AT_LIMIT') maxIterations = rounds;
    if (type === 'COMPACTED_OVER_BUDGET') maxToolCalls = toolCalls;
    if (type === 'REPAIR') repairs += 1;
  }
  const budget = maxToolCalls === undefined ? { maxTotalTokens: 1000 } : { maxTotalTokens: 1000, maxToolCalls };
  return { maxIterations, loopThreshold: 2, maxOutputRepairs: repairs, budget };
}

/** The concrete event a spec event stands for in `state`. */
function concrete(type: SpecType, state: TurnState): TurnEvent | { type: string; response: unknown } {
  const n = state.usage.modelCalls;
  const reply = (toolCalls: Array<{ id: string; name: string; input: unknown }>, usage?: object) =>
    ({
      type: 'model_responded',
      response: { text: 'Here you go.', toolCalls, ...(usage === undefined ? {} : { usage }) },
    }) as TurnEvent;
  const calls = state.batch?.calls ?? [];
  const parked = state.batch?.parked ?? [];
  const results = (ids: readonly string[]) =>
    calls.filter((c) => ids.includes(c.id)).map((c) => ({ callId: c.id, name: c.name, output: 'ok', isError: false }));
  const all = calls.map((c) => c.id);
  // The approved calls are running: this path approves every parked call.
  const approved = parked.filter((p) => state.batch?.decisions[p.call.id]?.type === 'approve').map((p) => p.call.id);
  switch (type) {
    case 'START':
      return { type: 'start', input: 'Plan a day.' };
    case 'REPLY_TEXT':
      return reply([]);
    // A fresh input per batch, so only REPLY_REPEATED makes a loop.
    case 'REPLY_TOOLS':
      return reply([{ id: `call-${n}-0`, name: 'search', input: { q: `topic ${n}` } }]);
    case 'REPLY_REPEATED': {
      const previous = state.lastBatch ?? [];
      return reply(previous.map(({ name, input }, i) => ({ id: `call-${n}-${i}`, name, input })));
    }
    case 'REPLY_OVER_BUDGET':
      return reply([{ id: `call-${n}-0`, name: 'search', input: {} }], { inputTokens: 4000, outputTokens: 1000 });
    case 'REPLY_BAD_ID':
      return reply([{ id: 'bad\u0007id', name: 'search', input: {} }]);
    case 'REPLY_FINAL':
      return reply([{ id: `call-${n}-0`, name: 'search', input: {} }]);
    case 'MODEL_FAILED':
      return { type: 'model_failed', error: { kind: 'overloaded', message: 'The model is overloaded.' } };
    case 'TOOLS_DONE':
      return { type: 'tools_completed', results: results(all) };
    case 'TOOLS_STOP':
      return { type: 'tools_completed', results: results(all).map((r) => ({ ...r, stop: { reason: 'enough' } })) };
    case 'TOOLS_PARKED':
      return { type: 'tools_parked', held: [], parked: calls.map((call) => ({ call })) };
    case 'TOOLS_INCOMPLETE':
      return { type: 'tools_completed', results: [] };
    case 'APPROVE':
      return { type: 'approvals_decided', decisions: Object.fromEntries(parked.map((p) => [p.call.id, { type: 'approve' }])) };
    case 'REJECT':
      return { type: 'approvals_decided', decisions: Object.fromEntries(parked.map((p) => [p.call.id, { type: 'reject' }])) };
    case 'EXPIRE':
      return { type: 'approval_expired' };
    case 'APPROVED_DONE':
      return { type: 'approved_tools_completed', results: results(approved) };
    // Every call of the batch is a transfer_task whose child runs (the turn is a supervisor's).
    case 'TOOLS_DELEGATE': {
      const transfer = { type: 'transfer' as const, agent: 'researcher', task: 'Look it up.', limits: {} };
      const ids = state.status === 'executing_approved' ? approved : all;
      const type = state.status === 'executing_approved' ? 'approved_tools_completed' : 'tools_completed';
      return { type, results: results(ids).map((r) => ({ ...r, action: transfer })) } as TurnEvent;
    }
    // The child's model call fails: the child ends, and its failure is the call's result.
    case 'CHILD_DONE': {
      const callId = state.agents?.delegations[0]?.callId ?? '';
      return {
        type: 'child',
        callId,
        event: { type: 'model_failed', error: { kind: 'overloaded', message: 'The model is overloaded.' } },
      };
    }
    case 'COMPACTED':
    case 'COMPACTED_AT_LIMIT':
    case 'COMPACTED_OVER_BUDGET':
      return { type: 'compacted' };
    case 'ACCEPT':
      return { type: 'output_accepted', output: state.candidate };
    case 'REPAIR':
    case 'REJECT_NO_REPAIRS':
      return { type: 'output_rejected', reason: 'Use a list.' };
    case 'CANCEL':
      return { type: 'cancel' };
    case 'MALFORMED':
      return { type: 'model_responded', response: { text: 42 } };
  }
}

/** The spec's name for the real state: the status, plus the substate the reader distinguishes. */
function specValueOf(state: TurnState): unknown {
  switch (state.status) {
    case 'calling_model':
      return { calling_model: state.forced === null ? 'tools_allowed' : 'final_only' };
    case 'finalizing':
      return { finalizing: state.forced === null ? 'normal' : 'forced' };
    default:
      return state.status;
  }
}

describe('turnSpec and step agree', () => {
  it('on every shortest path of the spec, extended by every event the spec allows at its end', () => {
    const paths = getShortestPaths(turnSpec);
    const walks: SpecType[][] = [];
    for (const path of paths) {
      const prefix = path.steps.map((s) => s.event.type as string).filter((t): t is SpecType => t !== 'xstate.init');
      walks.push(prefix);
      // A final spec state is done: it takes no events (the reducer's absorption is invariant 4).
      if (path.state.status === 'done') continue;
      for (const type of ALL_EVENTS) if (path.state.can({ type } as TurnSpecEvent)) walks.push([...prefix, type]);
    }
    const covered = new Set<string>();
    for (const walk of walks) {
      const actor = createActor(turnSpec).start();
      // A supervisor's turn: one that may delegate (TOOLS_DELEGATE); a turn of one agent moves the same otherwise.
      let state = createTurn({ id: 'spec-walk', limits: limitsFor(walk), agent: 'supervisor' });
      for (const [i, type] of walk.entries()) {
        const before = JSON.stringify(actor.getSnapshot().value);
        actor.send({ type } as TurnSpecEvent);
        [state] = step(state, concrete(type, state));
        const where = `after ${walk.slice(0, i + 1).join(' → ')}`;
        expect(specValueOf(state), where).toEqual(actor.getSnapshot().value);
        covered.add(`${before} ${type}`);
      }
      actor.stop();
    }
    testLog(
      `spec: ${paths.length} shortest paths, ${walks.length} walks, ${covered.size} distinct (state, event) transitions replayed against step`,
    );
    expect(paths.length).toBeGreaterThanOrEqual(15);
  });
});
