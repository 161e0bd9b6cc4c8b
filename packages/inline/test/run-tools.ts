// The tools the runTurn tests share: a plain one, one that needs approval and a loop-exempt one.
import { z } from 'zod';
import { defineTool } from '@turnkit/dispatch';

export const add = defineTool({
  name: 'add',
  description: 'Adds two numbers.',
  input: z.object({ a: z.number(), b: z.number() }),
  readOnly: true,
  execute: ({ a, b }) => a + b,
});
export const deploy = defineTool({
  name: 'deploy',
  description: 'Deploys.',
  input: z.object({ service: z.string() }),
  needsApproval: true,
  execute: ({ service }) => `deployed ${service}`,
});
export const search = defineTool({
  name: 'search',
  description: 'Searches.',
  input: z.object({ q: z.string() }),
  readOnly: true,
  loopExempt: true,
  execute: () => 'nothing',
});

export const retryable = (message: string) => Object.assign(new Error(message), { retryable: true });
