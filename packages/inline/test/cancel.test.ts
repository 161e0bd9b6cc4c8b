import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '@turnkit/dispatch';
import { runTurn } from '@turnkit/inline';
import { call, scriptedModel, text, toolCalls, transcriptLines } from '@turnkit/testing';

describe('runTurn: cancellation', () => {
  it('is cancelled without a model call when the signal is already aborted', async () => {
    const model = scriptedModel([text('x')]);
    const controller = new AbortController();
    controller.abort('too late');
    const result = await runTurn({ model, input: 'hi', signal: controller.signal });
    expect(result.status).toBe('cancelled');
    expect(result.reason).toBe('too late');
    expect(model.calls).toHaveLength(0);
  });

  it('cancels at once even when a tool ignores its signal', async () => {
    const controller = new AbortController();
    const stubborn = defineTool({
      name: 'stubborn',
      description: 'Never finishes.',
      input: z.object({}),
      readOnly: true,
      execute: () => {
        controller.abort('stop now');
        return new Promise(() => undefined);
      },
    });
    const result = await runTurn({
      model: scriptedModel([toolCalls(call('stubborn'))]),
      tools: [stubborn],
      input: 'hi',
      signal: controller.signal,
    });
    expect(result.status).toBe('cancelled');
    expect(result.reason).toBe('stop now');
    expect(transcriptLines(result.transcript).at(-1)).toMatch(/^tool call_1 stubborn: error cancelled/);
  });

  it('cancels a model call that ignores its signal', async () => {
    const controller = new AbortController();
    const model = scriptedModel([
      () => {
        controller.abort();
        return new Promise(() => undefined);
      },
    ]);
    const result = await runTurn({ model, input: 'hi', signal: controller.signal });
    expect(result.status).toBe('cancelled');
    expect(result.reason).toBe('cancelled by the caller');
  });
});
