import { describe, expect, it } from 'vitest';
import { createDispatcher } from '@turnkit/dispatch';
import { runTurn } from '@turnkit/inline';
import { call, scriptedModel, text, toolCalls, transcriptLines } from '@turnkit/testing';
import { add } from './run-tools.ts';

describe('runTurn: a failing dispatcher', () => {
  it('a dispatcher that throws fails the turn with dispatch_failed, and every call in flight gets a result from core', async () => {
    const broken = createDispatcher({ tools: [add] });
    const dispatcher = {
      ...broken,
      toolSpecs: () => broken.toolSpecs(),
      dispatch: () => Promise.reject(new Error('db down')),
    } as typeof broken;
    const model = scriptedModel([toolCalls(call('add', { a: 1, b: 2 }), call('add', { a: 2, b: 2 })), text('never')]);
    const result = await runTurn({ model, tools: dispatcher, input: 'add', trace: true });
    expect(result.status).toBe('failed');
    expect(result.error).toEqual({ kind: 'dispatch_failed', message: 'The tool dispatcher failed: db down.' });
    const why =
      'not executed: the tool dispatcher failed before this call reported a result (The tool dispatcher failed: db down.).';
    expect(transcriptLines(result.transcript)).toEqual([
      'user: add',
      'assistant: [call_1 add, call_2 add]',
      `tool call_1 add: error ${why}`,
      `tool call_2 add: error ${why}`,
    ]);
    expect(result.trace?.entries.map((e) => e.event.type)).toContain('effect_failed');
  });
});
