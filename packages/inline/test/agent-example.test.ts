import { expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '@turnkit/dispatch';
import { runTurn } from '@turnkit/inline';
import { call, scriptedModel, text, toolCalls, transcriptLines } from '@turnkit/testing';

const add = defineTool({ name: 'add', description: 'Adds two numbers.', input: z.object({ a: z.number(), b: z.number() }), readOnly: true, execute: ({ a, b }) => a + b });

it('answers with the sum from the add tool', async () => {
  const model = scriptedModel([toolCalls(call('add', { a: 1, b: 2 })), text('1 + 2 = 3')]);
  const result = await runTurn({ model, tools: [add], input: 'What is 1 + 2?' });
  expect(result.output).toBe('1 + 2 = 3');
  expect(transcriptLines(result.transcript)).toEqual(['user: What is 1 + 2?', 'assistant: [call_1 add]', 'tool call_1 add: ok 3', 'assistant: 1 + 2 = 3']);
  expect(model.calls[1]?.messages.at(-1)).toMatchObject({ role: 'tool', result: { output: 3 } });
  model.assertDone();
});
