import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { CompactInfo } from '@turnkit/core/internal';
import type { Message } from '@turnkit/core';
import { keepLastMessages } from '@turnkit/inline';
import { testLog } from '../../../test-log.ts';

const info: CompactInfo = {
  round: 1,
  usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0, cost: 0, modelCalls: 1, toolCalls: 0 },
};
const NUM_RUNS = 1000;

/** A well-formed transcript: system messages anywhere, assistant messages followed by one result per call. */
const transcript = fc
  .array(fc.oneof(fc.constant('system' as const), fc.constant('user' as const), fc.nat({ max: 3 })), { maxLength: 30 })
  .map((parts) => {
    const out: Message[] = [];
    let id = 0;
    for (const part of parts) {
      if (part === 'system' || part === 'user') out.push({ role: part, content: `${part} ${out.length}` });
      else {
        const calls = Array.from({ length: part }, () => ({ id: `c${id++}`, name: 't', input: null }));
        out.push({ role: 'assistant', content: `a ${out.length}`, toolCalls: calls });
        for (const c of calls) out.push({ role: 'tool', result: { callId: c.id, name: 't', output: null, isError: false } });
      }
    }
    return out;
  });

/** A conversation as turns build it: a system prompt (or not), the task, then rounds and follow-ups. */
const conversation = fc
  .tuple(
    fc.boolean(),
    fc.array(fc.oneof(fc.constant('user' as const), fc.constant('text' as const), fc.integer({ min: 1, max: 3 })), {
      maxLength: 30,
    }),
  )
  .map(([withSystem, parts]) => {
    const out: Message[] = withSystem ? [{ role: 'system', content: 'rules' }] : [];
    out.push({ role: 'user', content: 'the task' });
    let id = 0;
    for (const part of parts) {
      if (part === 'user') out.push({ role: 'user', content: `follow-up ${out.length}` });
      else if (part === 'text') out.push({ role: 'assistant', content: `a ${out.length}`, toolCalls: [] });
      else {
        const calls = Array.from({ length: part }, () => ({ id: `c${id++}`, name: 't', input: null }));
        out.push({ role: 'assistant', content: '', toolCalls: calls });
        for (const c of calls) out.push({ role: 'tool', result: { callId: c.id, name: 't', output: null, isError: false } });
      }
    }
    return out;
  });

describe('keepLastMessages properties', () => {
  it('always keeps the system prompt and the first user message, and never splits a call from its results', async () => {
    testLog(`keepLastMessages head property: numRuns ${NUM_RUNS}`);
    await fc.assert(
      fc.asyncProperty(conversation, fc.integer({ min: 1, max: 12 }), async (messages, n) => {
        const kept = await keepLastMessages(n)(messages, info);
        const head = messages[0]?.role === 'system' ? messages.slice(0, 2) : messages.slice(0, 1);
        expect(kept.slice(0, head.length)).toEqual(head);
        // Every tool result's call is present (before it), and every kept call keeps its result.
        const open = new Set<string>();
        for (const m of kept) {
          if (m.role === 'tool') {
            expect(open.has(m.result.callId), `the call of result ${m.result.callId}`).toBe(true);
            open.delete(m.result.callId);
          } else {
            expect([...open], 'calls left without results').toEqual([]);
            if (m.role === 'assistant') for (const c of m.toolCalls) open.add(c.id);
          }
        }
        expect([...open]).toEqual([]);
        expect(kept.at(-1)).toBe(messages.at(-1));
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('keeps every system message, at least n others, order, and no tool result without its assistant', async () => {
    testLog(`keepLastMessages property: numRuns ${NUM_RUNS}`);
    await fc.assert(
      fc.asyncProperty(transcript, fc.integer({ min: 1, max: 12 }), async (messages, n) => {
        const kept = await keepLastMessages(n)(messages, info);
        // Order preserved: kept is a subsequence of messages.
        let at = 0;
        for (const m of kept) {
          at = messages.indexOf(m, at);
          expect(at).toBeGreaterThanOrEqual(0);
          at += 1;
        }
        expect(kept.filter((m) => m.role === 'system')).toEqual(messages.filter((m) => m.role === 'system'));
        const others = messages.filter((m) => m.role !== 'system').length;
        expect(kept.filter((m) => m.role !== 'system').length).toBeGreaterThanOrEqual(Math.min(n, others));
        const askedFor = new Set<string>();
        for (const m of kept) {
          if (m.role === 'assistant') for (const c of m.toolCalls) askedFor.add(c.id);
          if (m.role === 'tool') expect(askedFor.has(m.result.callId)).toBe(true);
        }
      }),
      { numRuns: NUM_RUNS },
    );
  });
});
