// A worker on the far side of a network link that the partition test cuts. Its one tool journals
// its start, writes a side effect, then runs for `toolMs`. It prints one JSON line per observer
// event and per fault it survives (a write refused by the fencing token shows up as LeaseLostError).
//   node --import tsx --conditions=@turnkit/source worker.ts <url> <schema> <toolMs>

import type { Model, ModelRequest, ModelResponse } from '@turnkit/core';
import { defineTool } from '@turnkit/dispatch';
import { z } from 'zod';
import { createWorker, openStore } from '../../src/index.js';

const [url, schema, toolMs] = process.argv.slice(2) as [string, string, string];
const store = await openStore(url, { schema });
const print = (value: unknown): void => void process.stdout.write(`${JSON.stringify(value)}\n`);

const slow = defineTool({
  name: 'slow',
  description: 'Takes its time.',
  input: z.object({}),
  execute: () => new Promise<string>((resolve) => setTimeout(() => resolve('slow work done'), Number(toolMs))),
});
const model: Model = {
  async generate(request: ModelRequest): Promise<ModelResponse> {
    if (request.messages.some((m) => m.role === 'tool')) return { text: 'done', toolCalls: [] };
    return { text: '', toolCalls: [{ id: 'work', name: 'slow', input: {} }] };
  },
};
const worker = createWorker({
  store,
  agents: { partition: { model, tools: [slow] } },
  leaseMs: 1500,
  pollMs: 200,
  id: `worker_${process.argv[5] ?? process.pid}`,
  observer: (event) => print({ event }),
  onError: (error, turnId) => print({ fault: error instanceof Error ? error.name : 'Error', turnId }),
});
worker.start();
process.once('SIGTERM', () => void worker.stop({ deadlineMs: 500 }).then(() => process.exit(0)));
