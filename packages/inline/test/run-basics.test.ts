import { describe, expect, it } from 'vitest';
import { createDispatcher } from '@turnkit/dispatch';
import { runTurn } from '@turnkit/inline';
import { call, scriptedModel, text, toolCalls, transcriptLines } from '@turnkit/testing';
import { add, search } from './run-tools.ts';

describe('runTurn', () => {
  it('accepts a list of tool definitions and returns the transcript', async () => {
    const model = scriptedModel([toolCalls(call('add', { a: 1, b: 2 })), text('3')]);
    const result = await runTurn({ model, tools: [add], input: 'What is 1 + 2?' });
    expect(result.status).toBe('stopped');
    expect(result.text).toBe('3');
    expect(transcriptLines(result.transcript)).toEqual([
      'user: What is 1 + 2?',
      'assistant: [call_1 add]',
      'tool call_1 add: ok 3',
      'assistant: 3',
    ]);
    expect(result.usage.modelCalls).toBe(2);
    expect(result.usage.toolCalls).toBe(1);
  });

  it('merges the dispatcher loop-exempt tools into the limits', async () => {
    const result = await runTurn({
      model: scriptedModel([text('x')]),
      tools: [search],
      input: 'hi',
      limits: { loopExemptTools: ['other'] },
    });
    expect(result.state.limits.loopExemptTools).toEqual(['other', 'search']);
  });

  it('does not repeat a system message the transcript already starts with', async () => {
    const model = scriptedModel([text('2')]);
    const result = await runTurn({
      model,
      input: 'and now?',
      system: 'Be brief.',
      transcript: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: '1?' },
        { role: 'assistant', content: '1', toolCalls: [] },
      ],
    });
    expect(transcriptLines(result.transcript)).toEqual([
      'system: Be brief.',
      'user: 1?',
      'assistant: 1',
      'user: and now?',
      'assistant: 2',
    ]);
  });

  it('rejects bad options with a TypeError naming the option', async () => {
    await expect(runTurn({ model: {} as never, input: 'x' })).rejects.toThrow(/option `model`/);
    await expect(
      runTurn({
        model: scriptedModel([]),
        tools: createDispatcher({ tools: [add] }),
        permissions: { deny: ['add'] },
        input: 'x',
      }),
    ).rejects.toThrow(/createDispatcher/);
    await expect(runTurn({ model: scriptedModel([]), output: {} as never, input: 'x' })).rejects.toThrow(/option `output`/);
    await expect(runTurn({ model: scriptedModel([]), input: 'x', limits: { maxIterations: 0 } })).rejects.toThrow(RangeError);
    await expect(runTurn({ model: scriptedModel([]), input: 'x', maxModelRetries: -1 })).rejects.toThrow(
      /option `maxModelRetries` must be a whole number >= 0, got -1/,
    );
    await expect(runTurn({ model: scriptedModel([]), input: 'x', modelRetryBackoffMs: Number.NaN })).rejects.toThrow(
      /modelRetryBackoffMs/,
    );
  });

  it('passes wrapExecution to the dispatcher it makes, and refuses it beside a ready dispatcher', async () => {
    const seen: string[] = [];
    const result = await runTurn({
      model: scriptedModel([toolCalls(call('add', { a: 1, b: 2 })), text('3')]),
      tools: [add],
      input: 'add',
      id: 'turn-w',
      wrapExecution: async (execution, run) => {
        const outcome = await run();
        seen.push(`${execution.turnId} ${execution.tool} ${JSON.stringify(execution.input)} -> ${String(outcome.output)}`);
      },
    });
    expect(result.text).toBe('3');
    expect(seen).toEqual(['turn-w add {"a":1,"b":2} -> 3']);
    await expect(
      runTurn({
        model: scriptedModel([]),
        tools: createDispatcher({ tools: [add] }),
        input: 'x',
        wrapExecution: async (_e, run) => run(),
      }),
    ).rejects.toThrow(
      'runTurn: pass wrapExecution to createDispatcher when `tools` is already a dispatcher (it was made without them).',
    );
  });
});
