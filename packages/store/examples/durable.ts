import { z } from 'zod';
import { defineTool } from '@turnkit/dispatch';
import { createWorker, openStore } from '@turnkit/store';
import { call, scriptedModel, text, toolCalls, transcriptLines } from '@turnkit/testing';

// The agent is code, registered with the worker; the store keeps only its name with each turn.
const refund = defineTool({
  name: 'refund',
  description: 'Refunds an order.',
  input: z.object({ order: z.string() }),
  needsApproval: true,
  execute: ({ order }) => `refunded ${order}`,
});
const model = scriptedModel([toolCalls(call('refund', { order: 'A-17' })), text('Order A-17 is refunded.')]);

const store = await openStore('memory://'); // or openStore() for ./.turnkit/, or openStore('postgres://…')
const worker = createWorker({ store, agents: { support: { model, tools: [refund], system: 'You help customers.' } } });

const id = await store.submit({ agent: 'support', input: 'Please refund order A-17.' });
await worker.runUntilIdle();
const parked = await store.get(id);
console.log(parked?.status, parked?.parked.map((p) => p.call.name));

// Later, from any process that opens the same store: the decision is durable once this returns.
await store.decide(id, { [parked?.parked[0]?.call.id ?? '']: { type: 'approve' } });
await worker.runUntilIdle();
const done = await store.get(id);
console.log(transcriptLines(done?.transcript ?? []).join('\n'));
console.log(done?.status, JSON.stringify(done?.outcome));
await store.close();
