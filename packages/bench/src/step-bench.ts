// `step` alone: nanoseconds per transition over a mixed stream of pre-built events, so the figure
// is the reducer's own cost (no model, no tools, no promises, no event construction).
import { createTurn, step, type TurnEvent, type TurnState, type TurnStatus } from '@turnkit/core';
import { median } from './stats.js';
import type { StepFigure } from './report-types.js';

const call = (id: string, a: number) => ({ id, name: 'add', input: { a, b: 1 } });
const result = (id: string, output: number) => ({ callId: id, name: 'add', output, isError: false });
const replyWith = (...ids: string[]): TurnEvent => ({
  type: 'model_responded',
  response: { text: '', toolCalls: ids.map((id, i) => call(id, i)), usage: { inputTokens: 10, outputTokens: 5 } },
});
const answer = (text: string): TurnEvent => ({
  type: 'model_responded',
  response: { text, toolCalls: [], usage: { inputTokens: 10, outputTokens: 5 } },
});

interface EventScript {
  readonly events: readonly TurnEvent[];
  /** The status the turn must end in; a different one means the script no longer drives `step` as intended. */
  readonly ends: TurnStatus;
}

/** Turns that together touch most rows of the transition table. */
export const STEP_SCRIPTS: readonly EventScript[] = [
  // The benchmark scenario: two tool rounds, then the answer.
  {
    events: [
      { type: 'start', input: 'go' },
      replyWith('c0'),
      { type: 'tools_completed', results: [result('c0', 1)] },
      { type: 'compacted' },
      replyWith('c1'),
      { type: 'tools_completed', results: [result('c1', 2)] },
      { type: 'compacted' },
      answer('done'),
      { type: 'output_accepted', output: 'done' },
    ],
    ends: 'stopped',
  },
  // Approval: parked, approved, executed; then a rejected output repaired.
  {
    events: [
      { type: 'start', input: 'go' },
      replyWith('c0'),
      { type: 'tools_parked', held: [], parked: [{ call: call('c0', 0), reason: 'needs approval' }] },
      { type: 'approvals_decided', decisions: { c0: { type: 'approve' } } },
      { type: 'approved_tools_completed', results: [result('c0', 1)] },
      { type: 'compacted' },
      answer('not json'),
      { type: 'output_rejected', reason: 'the answer must be JSON' },
      answer('"done"'),
      { type: 'output_accepted', output: 'done' },
    ],
    ends: 'stopped',
  },
  // Parallel calls whose results arrive out of order, then a cancel mid-dispatch.
  {
    events: [
      { type: 'start', input: 'go' },
      replyWith('c0', 'c1'),
      { type: 'tools_completed', results: [result('c1', 2), result('c0', 1)] },
      { type: 'compacted' },
      replyWith('c2'),
      { type: 'cancel', reason: 'user left' },
    ],
    ends: 'cancelled',
  },
  // A model failure, and an event that does not belong to the status.
  {
    events: [
      { type: 'start', input: 'go' },
      { type: 'model_failed', error: { kind: 'http', message: 'model unavailable' } },
    ],
    ends: 'failed',
  },
  { events: [{ type: 'start', input: 'go' }, { type: 'compacted' }], ends: 'failed' },
];

function runScript(initial: TurnState, script: EventScript): TurnState {
  let state = initial;
  for (const event of script.events) state = step(state, event)[0];
  return state;
}

/**
 * Drives `step` over `turns` turns cycling through STEP_SCRIPTS, `batches` times, and reports
 * the median batch's nanoseconds per transition. Throws when a script ends in the wrong status.
 */
export function measureStep(turns: number, batches: number): StepFigure {
  // step never mutates its input, so every turn can start from the same initial state.
  const initial = createTurn({ id: 'bench' });
  for (const script of STEP_SCRIPTS) {
    const end = runScript(initial, script);
    if (end.status !== script.ends) {
      throw new Error(
        `The step benchmark's script ${script.events.map((e) => e.type).join(' → ')} ended '${end.status}' instead of '${script.ends}'; update STEP_SCRIPTS to the reducer.`,
      );
    }
  }
  const perTransition: number[] = [];
  let transitions = 0;
  // Batch 0 warms the JIT up and is not kept.
  for (let batch = 0; batch <= batches; batch++) {
    let count = 0;
    let wrong = 0;
    const started = process.hrtime.bigint();
    for (let turn = 0; turn < turns; turn++) {
      const script = STEP_SCRIPTS[turn % STEP_SCRIPTS.length] as EventScript;
      let state = initial;
      for (const event of script.events) state = step(state, event)[0];
      count += script.events.length;
      if (state.status !== script.ends) wrong++;
    }
    const elapsed = Number(process.hrtime.bigint() - started);
    if (wrong > 0)
      throw new Error(`${wrong} turns of the step benchmark ended in an unexpected status; step is not deterministic.`);
    if (batch === 0) continue;
    perTransition.push(elapsed / count);
    transitions += count;
  }
  return { transitions, turns: turns * batches, nsPerTransition: median(perTransition) };
}
