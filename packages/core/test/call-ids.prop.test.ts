// Call identity over whole turns: whatever ids the model sends (repeated in a reply, reused across
// rounds, missing, or shaped like a derived id), every call of the turn gets its own id, a model id
// is kept only when it is new, and a changed id keeps the model's as `originalId`.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createTurn, step, type ToolCall, type TurnState } from '@turnkit/core';

const NUM_RUNS = 300;
const modelId = fc.constantFrom('', '0', '1', 'call_1', 'c', 'c~2', 'x~1~1', '__proto__');
const replies = fc.array(fc.array(modelId, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 12 });

const filterBytes = (filter: string): Uint8Array =>
  filter === '' ? new Uint8Array(96) : new Uint8Array(Buffer.from(filter, 'base64'));

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
          // The filter is the base64 text of 96 bytes as the platform writes it, and its bits only grow.
          const filter = dispatching.callIds.filter;
          if (filter !== '') expect(Buffer.from(filter, 'base64').toString('base64')).toBe(filter);
          const before = filterBytes(state.callIds.filter);
          const after = filterBytes(filter);
          expect(after).toHaveLength(96);
          expect(after.map((byte, i) => byte & (before[i] as number))).toEqual(before);
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

describe('the call-id filter as stored', () => {
  it('keeps its layout: stored states read the same bits (ids a and call_1 kept)', () => {
    const [state] = step(createTurn({ id: 't', limits: { maxIterations: 20 } }), { type: 'start' });
    const toolCalls: ToolCall[] = [
      { id: 'a', name: 'search', input: {} },
      { id: 'call_1', name: 'search', input: {} },
    ];
    const [next] = step(state, { type: 'model_responded', response: { text: '', toolCalls } });
    expect(next.callIds).toEqual({
      count: 2,
      filter:
        'AAIAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAABAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAEAAAAAAAAAAAAAAAAAACAAAAAAAAAAAAAAAA',
    });
  });

  it('reads a filter ending in = (a hand-made state) as no bits there and writes As in their place', () => {
    const [started] = step(createTurn({ id: 't', limits: { maxIterations: 20 } }), { type: 'start' });
    const state: TurnState = { ...started, callIds: { count: 0, filter: `${'A'.repeat(126)}==` } };
    const toolCalls: ToolCall[] = [
      { id: 'a', name: 'search', input: {} },
      { id: 'call_1', name: 'search', input: {} },
    ];
    const [next] = step(state, { type: 'model_responded', response: { text: '', toolCalls } });
    expect(next.callIds.filter).toBe(
      'AAIAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAABAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAEAAAAAAAAAAAAAAAAAACAAAAAAAAAAAAAAAA',
    );
  });
});
