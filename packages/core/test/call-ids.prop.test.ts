// Call identity over whole turns: whatever ids the model sends (repeated in a reply, reused across
// rounds, missing, or shaped like a derived id), every call of the turn gets its own id, a model id
// is kept only when it is new, and a changed id keeps the model's as `originalId`.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createTurn, step, type ToolCall, type TurnState } from '@turnkit/core';

const NUM_RUNS = 300;
const modelId = fc.constantFrom('', '0', '1', 'call_1', 'c', 'c~2', 'x~1~1', '__proto__');
const replies = fc.array(fc.array(modelId, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 12 });

describe('call identity (fast-check)', () => {
  it(`every call of a turn gets a distinct id; a model id is kept only when new (numRuns ${NUM_RUNS}, up to 12 rounds of 4 calls)`, () => {
    fc.assert(
      fc.property(replies, (rounds) => {
        let state: TurnState = step(createTurn({ id: 't', limits: { maxIterations: 20, loopThreshold: 0 } }), {
          type: 'start',
        })[0];
        const given: string[] = [];
        const modelIds = new Set<string>();
        for (const ids of rounds) {
          const toolCalls = ids.map((id, i): ToolCall => ({ id, name: 'search', input: { q: `${given.length + i}` } }));
          const [dispatching, effects] = step(state, { type: 'model_responded', response: { text: '', toolCalls } });
          const sent = effects.flatMap((e) => (e.type === 'dispatch_tools' ? e.calls : []));
          expect(sent).toHaveLength(ids.length);
          sent.forEach((call, i) => {
            const own = ids[i] as string;
            if (call.id === own) expect(modelIds.has(own)).toBe(false);
            else expect(call.originalId).toBe(own === '' ? undefined : own);
            given.push(call.id);
            if (own !== '') modelIds.add(own);
          });
          expect(dispatching.callIds.count).toBe(given.length);
          const results = sent.map((c) => ({ callId: c.id, name: c.name, output: 'ok', isError: false }));
          state = step(step(dispatching, { type: 'tools_completed', results })[0], { type: 'compacted' })[0];
          expect(state.status).toBe('calling_model');
        }
        expect(new Set(given).size).toBe(given.length);
      }),
      { numRuns: NUM_RUNS },
    );
  });
});
