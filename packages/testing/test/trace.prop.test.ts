import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isTerminal, type ToolCall, type TurnEvent, type TurnLimitsInput } from '@turnkit/core';
import { replay, testTurn, type TestTurn } from '@turnkit/testing';
import { testLog } from '../../../test-log.ts';

const NUM_RUNS = 500;
/** Live events (fed before the turn ended) per run, on average, asserted below. */
const MIN_LIVE_AVERAGE = 10;

/** Events in any order: most are out of place for the current status, which core must absorb. */
const anyEvent: fc.Arbitrary<TurnEvent> = fc.oneof(
  fc.constant<TurnEvent>({ type: 'model_responded', response: { text: 'done', toolCalls: [] } }),
  fc.nat({ max: 99 }).map(
    (n): TurnEvent => ({
      type: 'model_responded',
      response: { text: '', toolCalls: [{ id: `c${n}`, name: 't', input: null }] },
    }),
  ),
  fc
    .nat({ max: 99 })
    .map((n): TurnEvent => ({ type: 'tools_completed', results: [{ callId: `c${n}`, name: 't', output: 1, isError: false }] })),
  fc.constant<TurnEvent>({ type: 'compacted' }),
  fc.constant<TurnEvent>({ type: 'output_accepted', output: 'done' }),
  fc.constant<TurnEvent>({ type: 'output_rejected', reason: 'again' }),
  fc.constant<TurnEvent>({ type: 'model_failed', error: { kind: 'x', message: 'y' } }),
  fc.constant<TurnEvent>({ type: 'cancel' }),
);

/**
 * One step of a turn: mostly a plausible answer to what the turn waits for (`choice` picks which),
 * now and then (1 in 40) any event at all, in or out of place.
 */
const stepChoice = fc.oneof(
  { weight: 39, arbitrary: fc.nat({ max: 99 }).map((choice) => ({ choice })) },
  { weight: 1, arbitrary: anyEvent.map((event) => ({ event })) },
);

/** Limits under which turns live for several rounds: a text answer, a loop or a limit ends them. */
const limits: fc.Arbitrary<TurnLimitsInput> = fc.record({
  maxIterations: fc.integer({ min: 4, max: 12 }),
  loopThreshold: fc.constantFrom(0, 0, 3, 5),
  maxOutputRepairs: fc.integer({ min: 0, max: 2 }),
  loopRecoveries: fc.integer({ min: 0, max: 1 }),
});

const search = (id: string, q: number): ToolCall => ({ id, name: 'search', input: { q } });
const ok = (call: ToolCall) => ({
  callId: call.id,
  name: call.name,
  output: `found ${JSON.stringify(call.input)}`,
  isError: false,
});

/** The event a plausible model, tool host or person sends next, for choice 0–99. */
function plausible(t: TestTurn, choice: number): TurnEvent {
  const blocking = t.blocking;
  const state = t.state;
  if (blocking === null) {
    // Parked for approval: decide every undecided call, or let the wait expire.
    if (choice < 10) return { type: 'approval_expired' };
    const decisions = Object.fromEntries(
      (state.batch?.parked ?? []).map((p, i) => [
        p.call.id,
        choice < 70 || i > 0 ? { type: 'approve' as const } : { type: 'reject' as const, reason: 'not now' },
      ]),
    );
    return { type: 'approvals_decided', decisions };
  }
  switch (blocking.type) {
    case 'call_llm': {
      if (choice < 5) return { type: 'model_responded', response: { text: 'Here is the answer.', toolCalls: [] } };
      const n = state.usage.modelCalls;
      const calls =
        choice < 60 ? [search(`m${n}-0`, choice % 7)] : [search(`m${n}-0`, choice % 5), search(`m${n}-1`, 100 + (choice % 3))];
      return { type: 'model_responded', response: { text: '', toolCalls: calls, usage: { inputTokens: 50, outputTokens: 5 } } };
    }
    case 'dispatch_tools': {
      const calls = blocking.calls;
      if (choice < 12)
        return {
          type: 'tools_parked',
          held: calls.slice(1).map(ok),
          parked: [{ call: calls[0] as ToolCall, reason: 'needs approval' }],
        };
      if (choice < 16) return { type: 'cancel_batch', reason: 'skipped' };
      const results = calls.map(ok);
      return { type: 'tools_completed', results: choice < 30 ? results.reverse() : results };
    }
    case 'execute_approved':
      return { type: 'approved_tools_completed', results: blocking.calls.map(ok) };
    case 'compact':
      return { type: 'compacted' };
    case 'check_output':
      return choice < 75
        ? { type: 'output_accepted', output: blocking.candidate }
        : { type: 'output_rejected', reason: 'Say it as a list.' };
    case 'done':
      return { type: 'compacted' }; // anything: a terminal state absorbs it
    case 'child':
      return { type: 'cancel' }; // never: these turns have one agent
  }
}

describe('trace properties', () => {
  it('a recorded trace of a realistic turn replays cleanly, and a changed state is reported at or before its entry', () => {
    let runs = 0;
    let live = 0;
    fc.assert(
      fc.property(limits, fc.array(stepChoice, { minLength: 20, maxLength: 40 }), fc.nat(), (turnLimits, steps, pick) => {
        const t = testTurn({ input: 'go', limits: turnLimits });
        for (const next of steps) {
          if (!isTerminal(t.state)) live += 1;
          t.send('event' in next ? next.event : plausible(t, next.choice));
        }
        runs += 1;
        const trace = t.trace();
        expect(replay(trace)).toEqual({ ok: true, steps: trace.entries.length });
        const index = pick % trace.entries.length;
        const entries = trace.entries.map((e, i) =>
          i === index ? { ...e, state: { ...e.state, round: e.state.round + 1 } } : e,
        );
        const report = replay({ ...trace, entries });
        expect(report.ok).toBe(false);
        if (!report.ok) expect(report.difference).toMatchObject({ index, part: 'state', path: 'round' });
      }),
      { numRuns: NUM_RUNS },
    );
    const average = live / runs;
    testLog(`trace replay property: numRuns ${NUM_RUNS}, ${live} live events, ${average.toFixed(1)} per run on average`);
    expect(average).toBeGreaterThanOrEqual(MIN_LIVE_AVERAGE);
  });
});
