// Structured output with one repair: the final answer must be JSON matching `output`. The
// scripted model's first answer gives the total as a string; the check sends the zod error back
// and the second answer passes.
//
//   turnkit run packages/cli/examples/extract-invoice.ts

import { defineTool } from '@turnkit/dispatch';
import { call, scriptedModel, text, toolCalls } from '@turnkit/testing';
import { z } from 'zod';
import type { ScenarioFile } from '@turnkit/cli';

const DOCUMENTS: Record<string, string> = {
  'INV-2025-0042': [
    'ACME Office Supplies GmbH · Invoice INV-2025-0042 · 3 March 2025',
    '2 × Ergonomic chair      @ 240.00 EUR',
    '5 × Desk lamp            @  32.50 EUR',
    'Total due: 642.50 EUR by 2 April 2025',
  ].join('\n'),
};

const readDocument = defineTool({
  name: 'read_document',
  description: 'Returns the text of a scanned document by its id.',
  input: z.object({ id: z.string() }),
  readOnly: true,
  execute: ({ id }) => {
    const doc = DOCUMENTS[id];
    if (doc === undefined) throw new Error(`no document ${id}`);
    return doc;
  },
});

const invoice = z.object({
  vendor: z.string(),
  number: z.string(),
  date: z.iso.date(),
  dueDate: z.iso.date(),
  currency: z.string().length(3),
  total: z.number().positive(),
  lines: z.array(z.object({ item: z.string(), quantity: z.number().int().positive(), unitPrice: z.number().positive() })).min(1),
});

const lines = [
  { item: 'Ergonomic chair', quantity: 2, unitPrice: 240 },
  { item: 'Desk lamp', quantity: 5, unitPrice: 32.5 },
];
const fields = { vendor: 'ACME Office Supplies GmbH', number: 'INV-2025-0042', date: '2025-03-03', dueDate: '2025-04-02', currency: 'EUR' };

export const scenario: ScenarioFile = {
  system: 'Extract invoices as JSON only.',
  input: 'Extract invoice INV-2025-0042 as JSON: vendor, number, date, dueDate, currency, total and lines.',
  tools: [readDocument],
  output: invoice,
  model: ({ startAt }) =>
    scriptedModel([
      toolCalls(call('read_document', { id: 'INV-2025-0042' }), { usage: { inputTokens: 220, outputTokens: 18 } }),
      // First try: the total is a string with a currency, which the schema rejects.
      text(JSON.stringify({ ...fields, total: '642.50 EUR', lines }), { usage: { inputTokens: 330, outputTokens: 120 } }),
      text(JSON.stringify({ ...fields, total: 642.5, lines }), { usage: { inputTokens: 480, outputTokens: 118 } }),
    ], { startAt }),
};
