import type { Model, ModelResponse } from '@turnkit/core';
import { defineTool } from '@turnkit/dispatch';
import { createWorker, openStore } from '@turnkit/store';
import { transcriptLines } from '@turnkit/testing';
import { z } from 'zod';

// A support agent. Its model here is a stand-in that answers by rule, so each process can run it.
const lookup = defineTool({
  name: 'lookup',
  description: 'Finds an order.',
  input: z.object({ order: z.string() }),
  readOnly: true,
  execute: ({ order }) => `${order}: shipped Monday`,
});
const refund = defineTool({
  name: 'refund',
  description: 'Refunds an order.',
  input: z.object({ order: z.string() }),
  needsApproval: true,
  execute: ({ order }) => `refunded ${order}`,
});
const model: Model = {
  async generate({ messages }): Promise<ModelResponse> {
    const last = messages.at(-1);
    const id = `call_${messages.length}`;
    if (last?.role === 'tool')
      return { text: last.result.name === 'lookup' ? 'A-17 shipped on Monday.' : 'A-17 is refunded.', toolCalls: [] };
    const said = last?.role === 'user' ? last.content : '';
    if (said.startsWith('Where')) return { text: '', toolCalls: [{ id, name: 'lookup', input: { order: 'A-17' } }] };
    if (said.startsWith('Please refund')) return { text: '', toolCalls: [{ id, name: 'refund', input: { order: 'A-17' } }] };
    return { text: 'You are welcome.', toolCalls: [] };
  },
};
const agents = { support: { model, tools: [lookup, refund], system: 'You help customers.' } };

// `node conversation.ts <store> first`, then `node conversation.ts <store> second`: two processes.
const [url, phase] = process.argv.slice(2);
const store = await openStore(url);
const worker = createWorker({ store, agents });
const thread = 'customer-42';

if (phase === 'first') {
  await store.submit({ agent: 'support', thread, input: 'Where is order A-17?' });
  await worker.runUntilIdle();
  const refunding = await store.submit({ agent: 'support', thread, input: 'Please refund it.' });
  await worker.runUntilIdle();
  const parked = await store.get(refunding);
  console.log(`first process: ${parked?.status}, waiting on ${parked?.parked.map((p) => p.call.name).join(', ')}`);
} else {
  // Another process, later: approve the parked refund, then the customer writes again.
  const waiting = await store.get({ thread });
  const call = waiting?.parked[0]?.call.id ?? '';
  await store.decide(waiting?.current ?? '', { [call]: { type: 'approve' } });
  await store.submit({ agent: 'support', thread, input: 'Thanks!' });
  await worker.runUntilIdle();
  const done = await store.get({ thread });
  console.log(`second process: ${done?.turns.map((t) => t.status).join(', ')}`);
  console.log(transcriptLines(done?.transcript ?? []).join('\n'));
}
await store.close();
