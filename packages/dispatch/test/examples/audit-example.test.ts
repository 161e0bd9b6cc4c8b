import { expect, it } from 'vitest';
import { z } from 'zod';
import type { CallRecord } from '@turnkit/core';
import { createDispatcher, defineTool } from '@turnkit/dispatch';

const add = defineTool({
  name: 'add',
  description: 'Adds two numbers.',
  input: z.object({ a: z.number(), b: z.number() }),
  readOnly: true,
  execute: ({ a, b }) => a + b,
});
const remove = defineTool({
  name: 'remove',
  description: 'Deletes a file.',
  input: z.object({ path: z.string() }),
  execute: ({ path }) => `removed ${path}`,
});

it('coerces quoted numbers, blocks calls outside the working directory, times and records every call', async () => {
  const timings: string[] = [];
  const records: CallRecord[] = [];
  const dispatcher = createDispatcher({
    tools: [add, remove],
    permissions: { allow: ['remove'] }, // the hook below keeps it inside the working directory
    coerce: true,
    context: { userId: 'u-1' },
    hooks: {
      before: [
        {
          name: 'stay-in-cwd',
          run: ({ call, input, context }) =>
            call.name === 'remove' && !(input as { path: string }).path.startsWith(String(context['cwd']))
              ? { kind: 'halt', output: 'Refused: that path is outside the working directory.' }
              : undefined,
        },
      ],
    },
    wrapExecution: async (execution, run) => {
      const outcome = await run();
      timings.push(`${execution.tool} ${outcome.isError ? outcome.errorKind : 'ok'} after ${outcome.attempts} try`);
    },
    onRecord: (record) => records.push(record),
  });
  const { results } = await dispatcher.dispatch(
    [
      { id: '1', name: 'add', input: { a: '2', b: 3 } },
      { id: '2', name: 'remove', input: { path: '/etc/passwd' } },
    ],
    { turnId: 't1', context: { cwd: '/home/me/project' } },
  );
  expect(results.map((r) => r.output)).toEqual([5, 'Refused: that path is outside the working directory.']);
  expect(timings).toEqual(['add ok after 1 try']);
  // In the order the results were known: the refusal at once, the sum when it had run.
  expect(records.map((r) => [r.callId, r.decision, r.source, r.outcome, r.input, r.attempts])).toEqual([
    ['2', 'deny', 'hook:stay-in-cwd', 'denied', { path: '/etc/passwd' }, 0],
    ['1', 'allow', 'readonly', 'ok', { a: 2, b: 3 }, 1],
  ]);
  expect(records[0]?.context).toEqual({ userId: 'u-1', cwd: '/home/me/project' });
});
