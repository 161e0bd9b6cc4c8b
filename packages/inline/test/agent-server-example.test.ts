import { expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '@turnkit/dispatch';
import { createAgent } from '@turnkit/inline';
import { call, scriptedModel, text, toolCalls } from '@turnkit/testing';

const add = defineTool({
  name: 'add',
  description: 'Adds two numbers.',
  input: z.object({ a: z.number(), b: z.number() }),
  readOnly: true, // changes nothing, so it runs without asking
  execute: async ({ a, b }) => a + b,
});

// Made once, when the server starts: options checked, tool specs and JSON Schemas built.
const agent = createAgent({ model: scriptedModel([]), tools: [add], system: 'You are a calculator.' });

it('answers each request with a turn of its own', async () => {
  // One request: a turn with its own transcript, grants and budget counts. (A scripted model's
  // script lasts one turn, so this test passes one per run; a real model is given once, above.)
  const model = scriptedModel([toolCalls(call('add', { a: 1, b: 2 })), text('3')]);
  const result = await agent.run('What is 1 + 2?', { model, signal: AbortSignal.timeout(10_000) });
  expect(result.status).toBe('stopped');
  expect(result.text).toBe('3');
});
