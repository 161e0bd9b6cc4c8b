import { describe, expect, it } from 'vitest';
import type { ModelResponse, ToolCall } from '@turnkit/core';
import { runTurn } from '@turnkit/inline';
import { defaultHandlers, modelRequestFor, type EffectHandlers } from '@turnkit/inline/driver';
import { scriptedModel, text } from '@turnkit/testing';
import { interpreterConformance } from '@turnkit/testing/conformance';

/**
 * What @turnkit/stream does: replace only the call_llm handler (here: collect `model.stream()`
 * parts into a response) and keep every other handler of inline's driver.
 */
const streaming: EffectHandlers = {
  ...defaultHandlers,
  async call_llm(effect, ctx) {
    const request = modelRequestFor(effect.request, ctx.transcript, ctx.dispatcher.toolSpecs());
    const response = await (async (): Promise<ModelResponse> => {
      const stream = ctx.model.stream?.(request, { signal: ctx.signal });
      if (stream === undefined) return ctx.model.generate(request, { signal: ctx.signal });
      let content = '';
      let usage: ModelResponse['usage'];
      const calls: { id: string; name: string; args: string }[] = [];
      for await (const part of stream) {
        if (part.type === 'text_delta') content += part.text;
        if (part.type === 'tool_call_start') calls.push({ id: part.id, name: part.name, args: '' });
        if (part.type === 'tool_call_delta') calls.findLast((c) => c.id === part.id)!.args += part.argsText;
        if (part.type === 'finish') usage = part.usage;
      }
      const toolCalls = calls.map(({ id, ...c }): ToolCall => {
        try {
          return { id, name: c.name, input: JSON.parse(c.args) };
        } catch {
          return { id, name: c.name, input: c.args, inputError: 'not JSON' };
        }
      });
      return usage === undefined ? { text: content, toolCalls } : { text: content, toolCalls, usage };
    })();
    return { type: 'model_responded', response };
  },
};

interpreterConformance('inline driver with a streaming call_llm handler', (options) => runTurn(options, streaming));

describe('handler table', () => {
  it('uses a replaced handler and observes appends through an extended one', async () => {
    const appended: string[] = [];
    const tapped: EffectHandlers = {
      ...streaming,
      append(effect, ctx) {
        appended.push(effect.message.role);
        return defaultHandlers.append(effect, ctx);
      },
    };
    const result = await runTurn({ model: scriptedModel([text('streamed reply')]), input: 'hi' }, tapped);
    expect(result.output).toBe('streamed reply');
    expect(appended).toEqual(['user', 'assistant']);
  });
});
