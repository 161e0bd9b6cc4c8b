import { expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '@turnkit/dispatch';
import { runTurn } from '@turnkit/inline';
import { call, scriptedModel, text, toolCalls } from '@turnkit/testing';

const tool = (name: string) => defineTool({ name, description: `The ${name} tool.`, input: z.object({}), readOnly: true, execute: () => `${name} ran` });
const tools = [tool('search'), tool('read_file'), tool('write_file'), tool('finish')];

it('offers the file tools only once the model has searched', async () => {
  const model = scriptedModel([toolCalls(call('search', {})), toolCalls(call('read_file', {})), text('done')]);
  await runTurn({
    model,
    tools,
    input: 'Fix the typo in the README.',
    alwaysOffer: ['finish'],
    selectTools: ({ transcript }) => (transcript.some((m) => m.role === 'tool') ? ['read_file', 'write_file'] : ['search']),
  });
  expect(model.calls.map((c) => c.tools.map((t) => t.name))).toEqual([
    ['search', 'finish'],
    ['read_file', 'write_file', 'finish'],
    ['read_file', 'write_file', 'finish'],
  ]);
});
