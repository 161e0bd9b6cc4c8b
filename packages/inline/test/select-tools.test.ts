import { describe, expect, it } from 'vitest';
import { runTurn } from '@turnkit/inline';
import { call, scriptedModel, text, toolCalls } from '@turnkit/testing';
import { add, search } from './run-tools.ts';

describe('selectTools and alwaysOffer: which tools each model call sees', () => {
  const two = [add, search];

  it('asks before each call that may use tools and offers only what it names, plus alwaysOffer', async () => {
    const model = scriptedModel([toolCalls(call('add', { a: 1, b: 2 })), toolCalls(call('search', { q: 'x' })), text('done')]);
    const asked: Array<{ iteration: number; last: string | undefined; tools: string[] }> = [];
    const result = await runTurn({
      model,
      tools: two,
      input: 'hi',
      alwaysOffer: ['search'],
      selectTools: (info) => {
        asked.push({ iteration: info.iteration, last: info.transcript.at(-1)?.role, tools: info.tools.map((t) => t.name) });
        return info.iteration === 1 ? ['add'] : [];
      },
    });
    expect(result.status).toBe('stopped');
    expect(asked).toEqual([
      { iteration: 1, last: 'user', tools: ['add', 'search'] },
      { iteration: 2, last: 'tool', tools: ['add', 'search'] },
      { iteration: 3, last: 'tool', tools: ['add', 'search'] },
    ]);
    expect(model.calls.map((c) => c.tools.map((t) => t.name))).toEqual([['add', 'search'], ['search'], ['search']]);
  });

  it('a forced final call offers no tools and does not ask', async () => {
    const model = scriptedModel([toolCalls(call('add', { a: 1, b: 2 })), text('3')]);
    const iterations: number[] = [];
    const result = await runTurn({
      model,
      tools: two,
      input: 'hi',
      limits: { maxIterations: 1 },
      alwaysOffer: ['add'],
      selectTools: (info) => (iterations.push(info.iteration), ['add']),
    });
    expect(result.stopReason).toBe('max_iterations');
    expect(iterations).toEqual([1]);
    expect(model.calls[1]).toMatchObject({ tools: [], toolChoice: 'none' });
  });

  it('a selectTools that throws or names an unknown tool fails the turn before the model call (tool_selection_failed, no retry)', async () => {
    const model = scriptedModel([text('never')]);
    const unknown = await runTurn({ model, tools: two, input: 'hi', selectTools: () => ['add', 'deploy'] });
    expect(unknown.error).toEqual({
      kind: 'tool_selection_failed',
      message:
        "The selectTools function chose 'deploy', which is not a defined tool (the tools: 'add', 'search'). No model call was made.",
      retryable: false,
    });
    const thrown = await runTurn({
      model,
      tools: two,
      input: 'hi',
      selectTools: () => {
        throw new Error('index offline');
      },
    });
    expect(thrown.error?.message).toBe(
      'The selectTools function threw: index offline. Fix the function passed as `selectTools`; no model call was made.',
    );
    const garbage = await runTurn({ model, tools: two, input: 'hi', selectTools: () => 'add' as never });
    expect(garbage.error?.message).toContain("must return an array of tool names; it returned the string 'add'");
    expect(model.calls).toHaveLength(0);
  });

  it('checks the options up front', async () => {
    const model = scriptedModel([text('x')]);
    await expect(runTurn({ model, tools: two, input: 'hi', alwaysOffer: ['deploy'] })).rejects.toThrow(
      "runTurn option `alwaysOffer` names 'deploy', not defined tools (the tools: 'add', 'search').",
    );
    await expect(runTurn({ model, tools: two, input: 'hi', alwaysOffer: 'add' as never })).rejects.toThrow(
      'must be an array of tool names',
    );
    await expect(runTurn({ model, tools: two, input: 'hi', selectTools: ['add'] as never })).rejects.toThrow(
      '`selectTools` must be a function',
    );
  });
});
