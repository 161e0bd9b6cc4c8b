import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '@turnkit/dispatch';
import { runTurn } from '@turnkit/inline';
import { call, scriptedModel, text, toolCalls } from '@turnkit/testing';

describe('runTurn: the tool call budget', () => {
  it('limits.budget.maxToolCalls holds per call: with 1 and a batch of three, one runs and the others get a budget result', async () => {
    let runs = 0;
    const counted = defineTool({
      name: 'count',
      description: 'Counts.',
      input: z.object({ n: z.number() }),
      readOnly: true,
      execute: ({ n }) => {
        runs++;
        return n;
      },
    });
    const model = scriptedModel([
      toolCalls(call('count', { n: 1 }), call('count', { n: 2 }), call('count', { n: 3 })),
      text('Only one ran.'),
    ]);
    const result = await runTurn({ model, tools: [counted], input: 'count thrice', limits: { budget: { maxToolCalls: 1 } } });
    expect(runs).toBe(1);
    const budget = "not executed: the turn's tool call budget is used up (limits.budget.maxToolCalls is 1).";
    expect(result.transcript.filter((m) => m.role === 'tool').map((m) => m.result)).toEqual([
      { callId: 'call_1', name: 'count', output: 1, isError: false },
      { callId: 'call_2', name: 'count', output: budget, isError: true, errorKind: 'budget' },
      { callId: 'call_3', name: 'count', output: budget, isError: true, errorKind: 'budget' },
    ]);
    // The budget is used up, so the turn stops before another model call.
    expect(result.outcome).toMatchObject({ status: 'stopped', stopReason: 'budget_exhausted' });
    expect(model.calls).toHaveLength(1);
  });
});
