import { z } from 'zod';
import { defineTool } from '@turnkit/dispatch';
import { runTurn } from '@turnkit/inline';
import { call, scriptedModel, text, toolCalls, transcriptLines } from '@turnkit/testing';

const add = defineTool({ name: 'add', description: 'Adds two numbers.', input: z.object({ a: z.number(), b: z.number() }), readOnly: true, execute: ({ a, b }) => a + b });
// A scripted model stands in for a real one: the same replies and call ids on every run.
const model = scriptedModel([toolCalls(call('add', { a: 1, b: 2 })), text('1 + 2 = 3')]);

const result = await runTurn({ model, tools: [add], system: 'You are a calculator.', input: 'What is 1 + 2?' });
console.log(transcriptLines(result.transcript).join('\n'));
console.log(result.status, result.stopReason, result.output);
