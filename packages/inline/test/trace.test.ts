import { describe, expect, it } from 'vitest';
import { runTurn } from '@turnkit/inline';
import { call, replay, scriptedModel, text, toolCalls } from '@turnkit/testing';
import type { Trace } from '@turnkit/core';
import { add } from './run-tools.ts';

describe('runTurn: traces', () => {
  it('records a trace that replays without a difference, and reports a tampered one', async () => {
    const result = await runTurn({
      model: scriptedModel([toolCalls(call('add', { a: 1, b: 2 })), text('3')]),
      tools: [add],
      input: 'hi',
      trace: true,
      id: 't1',
    });
    // inline's TurnTrace is the Trace that @turnkit/testing replays (checked by the compiler here).
    const typed: Trace | undefined = result.trace;
    expect(typed?.initial.status).toBe('ready');
    const trace = JSON.parse(JSON.stringify(result.trace));
    expect(trace.entries.map((e: { event: { type: string } }) => e.event.type)).toEqual([
      'start',
      'model_responded',
      'tools_completed',
      'compacted',
      'model_responded',
      'output_accepted',
    ]);
    expect(replay(trace)).toEqual({ ok: true, steps: 6 });
    trace.entries[1].event.response.toolCalls[0].input.b = 5;
    const report = replay(trace);
    expect(report.ok).toBe(false);
    if (!report.ok)
      expect(report.difference).toMatchObject({
        index: 1,
        part: 'state',
        path: 'batch.calls[0].input.b',
        recorded: 2,
        replayed: 5,
      });
  });

  it('has no trace unless asked', async () => {
    const result = await runTurn({ model: scriptedModel([text('x')]), input: 'hi' });
    expect(result.trace).toBeUndefined();
  });
});
