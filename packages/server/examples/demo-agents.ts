// The console demo's agent: a support desk with a scripted model (no API key, the same replies on
// every run). Looking up an order runs at once; refunding one waits for a person.

import type { Message, Model, ModelResponse } from '@turnkit/core';
import { defineTool } from '@turnkit/dispatch';
import type { AgentDefinition, Store } from '@turnkit/store';
import { z } from 'zod';

const lookup = defineTool({
  name: 'lookup_order',
  description: 'Looks up an order.',
  input: z.object({ order: z.string() }),
  readOnly: true,
  execute: ({ order }) => ({ order, status: 'shipped', carrier: 'DHL', eta: '2 days' }),
});

const refund = defineTool({
  name: 'refund',
  description: 'Refunds an order to the card it was paid with.',
  input: z.object({ order: z.string(), amount: z.number(), currency: z.string() }),
  needsApproval: true,
  execute: ({ order, amount, currency }) => `refunded ${amount} ${currency} for ${order}`,
});

const words = (messages: readonly Message[]): number =>
  messages.reduce((n, m) => n + (m.role === 'tool' ? JSON.stringify(m.result.output).length : m.content.length), 0);

/** Answers from the conversation: a tool call for the request, then a summary of the results. */
export const supportModel: Model = {
  async generate(request): Promise<ModelResponse> {
    const usage = { inputTokens: 40 + Math.round(words(request.messages) / 4), outputTokens: 18, cost: 0.0004 };
    const last = request.messages[request.messages.length - 1];
    if (last?.role === 'tool') {
      const results = request.messages.filter((m) => m.role === 'tool').map((m) => m.result);
      const rejected = results.find((r) => r.isError);
      const text = rejected
        ? `I did not do that: ${String(rejected.output)}`
        : `Done: ${results.map((r) => (typeof r.output === 'string' ? r.output : JSON.stringify(r.output))).join('; ')}.`;
      return { text, toolCalls: [], usage };
    }
    const input = last?.role === 'user' ? last.content : '';
    const order = /order ([A-Z]-\d+)/.exec(input)?.[1] ?? 'A-1';
    if (/refund/i.test(input)) {
      const amount = Number(/(\d+(?:\.\d+)?) ?EUR/.exec(input)?.[1] ?? 49.9);
      return { text: '', toolCalls: [{ id: 'call_1', name: 'refund', input: { order, amount, currency: 'EUR' } }], usage };
    }
    return { text: '', toolCalls: [{ id: 'call_1', name: 'lookup_order', input: { order } }], usage };
  },
};

/** The desk's model: gives the customer's request to `support` (a child turn), then passes its answer on. */
export const deskModel: Model = {
  async generate(request): Promise<ModelResponse> {
    const last = request.messages[request.messages.length - 1];
    if (last?.role === 'tool') return { text: `Support says: ${String(last.result.output)}`, toolCalls: [] };
    const task = last?.role === 'user' ? last.content : '';
    return { text: '', toolCalls: [{ id: 'call_1', name: 'transfer_task', input: { agent: 'support', task } }] };
  },
};

export const demoAgents: Record<string, AgentDefinition> = {
  // A turn of many agents (docs/agents.md): the desk delegates to support, whose refund waits for a person.
  desk: {
    model: deskModel,
    system: 'You take requests and give them to the right team.',
    delegates: ['support'],
  },
  support: {
    description: 'Answers questions about orders and refunds them.',
    model: supportModel,
    tools: [lookup, refund],
    system: 'You help customers with their orders.',
    limits: { maxIterations: 4, budget: { maxModelCalls: 6, maxToolCalls: 4, maxTotalTokens: 2000, maxCost: 0.01 } },
  },
};

/** A few turns to look at: one answered, two waiting for a person, one for an agent no worker has. */
export async function submitDemoTurns(store: Store): Promise<string[]> {
  return [
    await store.submit({ agent: 'support', input: 'Where is my order B-2?' }),
    await store.submit({ agent: 'support', input: 'Please refund order A-17 (49.90 EUR), it arrived broken.' }),
    await store.submit({ agent: 'support', input: 'Refund order C-9, 120 EUR.' }),
    await store.submit({ agent: 'billing', input: 'Send me my invoices.' }),
  ];
}
