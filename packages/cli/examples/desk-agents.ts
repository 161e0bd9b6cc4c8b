// A help desk's agents in one file: `orders` looks orders up, `billing` reads invoices. Scripted
// models, so it runs with no key. `turnkit run` runs one of them by name; `turnkit worker` and
// `turnkit dev` run them all.
//
//   turnkit run packages/cli/examples/desk-agents.ts --agent billing --input 'What do I owe on invoice 7?'
//   turnkit dev --agents packages/cli/examples/desk-agents.ts

import type { Model } from '@turnkit/core';
import { defineTool } from '@turnkit/dispatch';
import { call, scriptedModel, text, toolCalls } from '@turnkit/testing';
import { z } from 'zod';

const lookupOrder = defineTool({
  name: 'lookup_order',
  description: 'Looks up an order by its number.',
  input: z.object({ order: z.string() }),
  readOnly: true,
  execute: ({ order }) => ({ order, status: 'shipped', eta: '2 days' }),
});

const readInvoice = defineTool({
  name: 'read_invoice',
  description: 'Reads an invoice by its number.',
  input: z.object({ invoice: z.number().int() }),
  readOnly: true,
  execute: ({ invoice }) => ({ invoice, totalEur: 120, dueDate: '2025-07-01' }),
});

export const agents = {
  orders: {
    tools: [lookupOrder],
    system: 'You answer questions about orders.',
    model: ({ startAt }: { startAt: number }): Model =>
      scriptedModel([toolCalls(call('lookup_order', { order: 'A-17' })), text('Order A-17 has shipped; it arrives in 2 days.')], {
        startAt,
      }),
  },
  billing: {
    tools: [readInvoice],
    system: 'You answer questions about invoices.',
    model: ({ startAt }: { startAt: number }): Model =>
      scriptedModel([toolCalls(call('read_invoice', { invoice: 7 })), text('Invoice 7 comes to 120 EUR, due on 1 July.')], {
        startAt,
      }),
  },
};
