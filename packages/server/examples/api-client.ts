import { serve } from '@turnkit/server';
import { createWorker, openStore } from '@turnkit/store';
import { demoAgents } from './demo-agents.js';

// A store, a worker with the demo support agent, and the server (127.0.0.1, a free port).
const store = await openStore('memory://');
const worker = createWorker({ store, agents: demoAgents, pollMs: 20 });
worker.start();
const token = 'docs-example-token-0123456789abcdef';
const server = await serve({ store, token });

// The JSON reply of an API call (the shapes are in /api/openapi.json).
const api = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
  const response = await fetch(`${server.url}/api${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return (await response.json()) as T;
};
type Turn = { status: string; parked: { call: { id: string; name: string; input: unknown } }[] };

const submitted = await api<{ id: string }>('POST', '/turns', { agent: 'support', input: 'Refund order A-17, 49.90 EUR.', id: 'turn_a17' });
console.log('submitted', submitted.id);
// Wait until the worker parks the refund for a person.
let turn = await api<Turn>('GET', '/turns/turn_a17');
while (turn.status !== 'awaiting_approval') turn = await api<Turn>('GET', '/turns/turn_a17');
console.log('parked', JSON.stringify(turn.parked[0]?.call));

console.log('decided', JSON.stringify(await api('POST', '/turns/turn_a17/decisions', { decisions: { call_1: { type: 'approve' } } })));
const events = await fetch(`${server.url}/api/turns/turn_a17/events`, { headers: { authorization: `Bearer ${token}` } });
const statuses = [...(await events.text()).matchAll(/^event: status\ndata: (.*)$/gm)].map((m) => JSON.parse(m[1] ?? '{}').status);
console.log('statuses', statuses.join(' → '));
console.log('bad body', JSON.stringify(await api('POST', '/turns', { agent: 42 })));

await server.close();
await worker.stop();
await store.close();
