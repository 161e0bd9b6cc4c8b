import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { TurnEvent } from '@turnkit/core';
import { replay, startTurn } from '@turnkit/testing';
import { testLog } from '../../../test-log.ts';

const NUM_RUNS = 500;

/** Events in any order: most are out of place for the current status, which core must absorb. */
const anyEvent: fc.Arbitrary<TurnEvent> = fc.oneof(
  fc.constant<TurnEvent>({ type: 'model_responded', response: { text: 'done', toolCalls: [] } }),
  fc.nat({ max: 99 }).map((n): TurnEvent => ({ type: 'model_responded', response: { text: '', toolCalls: [{ id: `c${n}`, name: 't', input: null }] } })),
  fc.nat({ max: 99 }).map((n): TurnEvent => ({ type: 'tools_completed', results: [{ callId: `c${n}`, name: 't', output: 1, isError: false }] })),
  fc.constant<TurnEvent>({ type: 'compacted' }),
  fc.constant<TurnEvent>({ type: 'output_accepted', output: 'done' }),
  fc.constant<TurnEvent>({ type: 'output_rejected', reason: 'again' }),
  fc.constant<TurnEvent>({ type: 'model_failed', error: { kind: 'x', message: 'y' } }),
  fc.constant<TurnEvent>({ type: 'cancel' }),
);

describe('trace properties', () => {
  it('a recorded trace replays cleanly, and a changed state is reported at or before its entry', () => {
    testLog(`trace replay property: numRuns ${NUM_RUNS}`);
    fc.assert(
      fc.property(fc.array(anyEvent, { maxLength: 12 }), fc.nat(), (events, pick) => {
        const t = startTurn({ input: 'go' });
        for (const event of events) t.send(event);
        const trace = t.trace();
        expect(replay(trace)).toEqual({ ok: true, steps: trace.entries.length });
        const index = pick % trace.entries.length;
        const entries = trace.entries.map((e, i) => (i === index ? { ...e, state: { ...e.state, round: e.state.round + 1 } } : e));
        const report = replay({ ...trace, entries });
        expect(report.ok).toBe(false);
        if (!report.ok) expect(report.difference).toMatchObject({ index, part: 'state', path: 'round' });
      }),
      { numRuns: NUM_RUNS },
    );
  });
});
