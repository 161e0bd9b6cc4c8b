import { z } from 'zod';
import { defineTool } from '@turnkit/dispatch';
import { createDbosTurns } from '@turnkit/dbos';
import { call, scriptedModel, text, toolCalls, transcriptLines } from '@turnkit/testing';

const refund = defineTool({
  name: 'refund',
  description: 'Refunds an order.',
  input: z.object({ order: z.string() }),
  needsApproval: true,
  execute: ({ order }) => `refunded ${order}`,
});
const model = scriptedModel([toolCalls(call('refund', { order: 'A-17' })), text('Order A-17 is refunded.')]);

// With agents, DBOS runs in this process: each turn is a DBOS workflow in the database of this URL.
const turns = await createDbosTurns({
  databaseUrl: process.env.DATABASE_URL ?? 'postgres://localhost/app',
  agents: { support: { model, tools: [refund], system: 'You help customers.' } },
});

const id = await turns.submit({ agent: 'support', input: 'Please refund order A-17.' });
for await (const event of turns.watch(id)) if (event.type === 'status' && event.status === 'awaiting_approval') break;
const parked = await turns.get(id);
console.log(parked?.status, parked?.parked.map((p) => p.call.name));

// From any process, a client (createDbosTurns without agents) as well: the decision is a DBOS message.
await turns.decide(id, { [parked?.parked[0]?.call.id ?? '']: { type: 'approve' } });
for await (const _event of turns.watch(id)); // until the turn ends
const done = await turns.get(id);
console.log(transcriptLines(done?.transcript ?? []).join('\n'));
console.log(done?.status, JSON.stringify(done?.outcome));
await turns.close();
