import { describe, expect, it } from 'vitest';
import { runTurn } from '@turnkit/inline';
import { call, scriptedModel, text, toolCalls, transcriptLines } from '@turnkit/testing';
import { add } from './run-tools.ts';

describe('runTurn: the compact option', () => {
  it('fails the turn naming compact when compact throws or returns garbage', async () => {
    const steps = () => scriptedModel([toolCalls(call('add', { a: 1, b: 2 })), text('3')]);
    const thrown = await runTurn({
      model: steps(),
      tools: [add],
      input: 'hi',
      compact: () => {
        throw new Error('no space');
      },
    });
    expect(thrown.error).toMatchObject({ kind: 'compact_failed' });
    expect(thrown.error?.message).toContain('compact function threw: no space');
    // The tool result made it into the transcript before compaction failed.
    expect(transcriptLines(thrown.transcript).at(-1)).toBe('tool call_1 add: ok 3');
    const garbage = await runTurn({ model: steps(), tools: [add], input: 'hi', compact: () => 'short' as never });
    expect(garbage.error?.kind).toBe('compact_failed');
  });

  it('fails the turn with effect_failed compact when compact separates tool results from their call', async () => {
    const model = scriptedModel([toolCalls(call('add', { a: 1, b: 2 }), call('add', { a: 3, b: 4 })), text('3 and 7')]);
    const onStep: string[] = [];
    const result = await runTurn({
      model,
      tools: [add],
      input: 'hi',
      compact: (t) => t.filter((m) => m.role !== 'assistant'),
      onStep: (r) => onStep.push(r.event.type === 'effect_failed' ? `effect_failed ${r.event.effect}` : r.event.type),
    });
    expect(onStep).toContain('effect_failed compact');
    expect(result.error).toEqual({
      kind: 'compact_failed',
      message:
        'The compact function broke calls apart from their results: it keeps the tool results for "call_1", "call_2" but drops the assistant message that made those calls. ' +
        'Keep or drop an assistant message together with its tool results (keepLastMessages does); the transcript was left as it was.',
    });
    // The model never saw the broken transcript, and the transcript was left whole.
    expect(model.calls).toHaveLength(1);
    expect(result.transcript.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'tool']);
  });

  it('fails the turn when compact keeps a call but drops its result, or returns a message without its parts', async () => {
    const steps = () => scriptedModel([toolCalls(call('add', { a: 1, b: 2 })), text('3')]);
    const dropped = await runTurn({
      model: steps(),
      tools: [add],
      input: 'hi',
      compact: (t) => t.filter((m) => m.role !== 'tool'),
    });
    expect(dropped.error?.message).toContain('it keeps the calls "call_1" but drops their tool results');
    const partless = await runTurn({
      model: steps(),
      tools: [add],
      input: 'hi',
      compact: (t) => [...t, { role: 'tool' } as never],
    });
    expect(partless.error?.message).toContain('item 3 is not one');
  });

  it('a transcript handed over already unpaired is not blamed on compact', async () => {
    const earlier = [{ role: 'tool' as const, result: { callId: 'old', name: 'add', output: 1, isError: false } }];
    const result = await runTurn({
      model: scriptedModel([toolCalls(call('add', { a: 1, b: 2 })), text('3')]),
      tools: [add],
      input: 'hi',
      transcript: earlier,
      compact: (t) => t.slice(),
    });
    expect(result.status).toBe('stopped');
  });

  it('replaces the transcript with what compact returns', async () => {
    const model = scriptedModel([toolCalls(call('add', { a: 1, b: 2 })), text('3')]);
    const result = await runTurn({
      model,
      tools: [add],
      input: 'hi',
      system: 'Be brief.',
      compact: (t) => t.filter((m) => m.role !== 'user'),
    });
    expect(model.calls[1]?.messages.map((m) => m.role)).toEqual(['system', 'assistant', 'tool']);
    expect(result.transcript.map((m) => m.role)).toEqual(['system', 'assistant', 'tool', 'assistant']);
  });
});
