// The durable protocol's model world with the call ids a model server really sends: one id twice in
// a reply and a call without an id. The world's turn takes its calls' ids from core's step of such
// a reply, as a worker's would, and the exploration finds every invariant kept; the same world fed
// the model's ids as they came (two calls named `c`) breaks them, which is why core owns the ids.
import { createTurn, step, type ToolCall } from '@turnkit/core';
import { exploreStore } from '@turnkit/check/internal';
import type { TurnSpec } from '../src/store/types.ts';
import { describe, expect, it } from 'vitest';

/** The ids core gives the calls of `reply` (the first reply of a turn). */
function coreIds(reply: readonly ToolCall[]): string[] {
  const [calling] = step(createTurn({ id: 't1' }), { type: 'start', input: 'go' });
  const [dispatching] = step(calling, { type: 'model_responded', response: { text: '', toolCalls: reply } });
  return (dispatching.batch?.calls ?? []).map((c) => c.id);
}

const reply: ToolCall[] = [
  { id: 'c', name: 'refund', input: { amount: 10 } },
  { id: 'c', name: 'refund', input: { amount: 5000 } },
  { id: '', name: 'notify', input: {} },
];
const PARKED = [false, true, false];

const world = (ids: readonly string[]): TurnSpec => ({
  id: 't1',
  calls: ids.map((id, i) => ({ id, parked: PARKED[i] === true })),
});

describe("the durable protocol's world with repeated and missing model ids (2 workers, 1 death)", () => {
  it("with core's ids every invariant holds on every edge, exhaustively", () => {
    const ids = coreIds(reply);
    expect(ids).toEqual(['c', 'c~2', 'call~3']);
    const result = exploreStore({ config: { workers: 2, deaths: 1, pauses: 0, turns: [world(ids)] } });
    expect(result.violationCount).toBe(0);
    expect(result.exhaustive).toBe(true);
    expect(result.states).toBeGreaterThan(1000);
  });

  it("with the model's ids as sent (two calls named c), the exploration finds a broken invariant", () => {
    const result = exploreStore({ config: { workers: 2, deaths: 1, pauses: 0, turns: [world(['c', 'c', 'n'])] }, maxDepth: 60 });
    expect(result.violationCount).toBeGreaterThan(0);
  });
});
