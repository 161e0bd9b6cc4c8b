import { expect, it, vi } from 'vitest';
import { z } from 'zod';
import { createDispatcher, defineTool, ToolError } from '@turnkit/dispatch';

let tries = 0;
const search = defineTool({
  name: 'search',
  description: 'Searches the web.',
  input: z.object({ q: z.string() }),
  readOnly: true,
  retryPolicy: { transient: { attempts: 4, backoffMs: 100 } },
  execute: async ({ q }) => {
    if (++tries < 3) throw new ToolError('upstream returned 503', { kind: 'transient' });
    return `results for ${q}`;
  },
});

it('retries a transient failure after 100 ms, then 200 ms', async () => {
  vi.useFakeTimers();
  const dispatcher = createDispatcher({ tools: [search] });
  const pending = dispatcher.dispatch([{ id: '1', name: 'search', input: { q: 'turnkit' } }], { turnId: 't1' });
  await vi.advanceTimersByTimeAsync(99);
  expect(tries).toBe(1);
  await vi.advanceTimersByTimeAsync(1 + 200);
  const { results } = await pending;
  vi.useRealTimers();
  expect(tries).toBe(3);
  expect(results).toEqual([{ callId: '1', name: 'search', output: 'results for turnkit', isError: false }]);
});

it('never retries a permission error, and says what kind of failure it was', async () => {
  const read = defineTool({
    name: 'read_secret',
    description: 'Reads a secret.',
    input: z.object({}),
    readOnly: true,
    execute: () => {
      throw new ToolError('403 Forbidden', { kind: 'permission' });
    },
  });
  const { results } = await createDispatcher({ tools: [read] }).dispatch([{ id: '2', name: 'read_secret', input: {} }], {
    turnId: 't1',
  });
  expect(results).toEqual([
    {
      callId: '2',
      name: 'read_secret',
      output: "Error calling tool 'read_secret': ToolError (permission): 403 Forbidden",
      isError: true,
      errorKind: 'permission',
    },
  ]);
});
