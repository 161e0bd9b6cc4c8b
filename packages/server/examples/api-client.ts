import { serve } from '@turnkit/server';
import { createWorker, openStore } from '@turnkit/store';
import { demoAgents } from './demo-agents.js';

// A store, a worker with the demo support agent, and the server (127.0.0.1, a free port).
const store = await openStore('memory://');
const worker = createWorker({ store, agents: demoAgents, pollMs: 20 });
worker.start();
const token = 'docs-example-token-0123456789abcdef';
const server = await serve({ store, token });

const api = async (method: string, path: string, body?: unknown) => {
  const response = await fetch(`${server.url}/api${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: await response.json() };
};

const { body: submitted } = await api('POST', '/turns', { agent: 'support', input: 'Refund order A-17, 49.90 EUR.', id: 'turn_a17' });
console.log('submitted', submitted.id);
// Follow the turn's events until it waits for a person.
let turn = await api('GET', '/turns/turn_a17');
while (turn.body.status !== 'awaiting_approval') turn = await api('GET', '/turns/turn_a17');
console.log('parked', JSON.stringify(turn.body.parked[0].call));

console.log('decided', JSON.stringify((await api('POST', '/turns/turn_a17/decisions', { decisions: { call_1: { type: 'approve' } } })).body));
const events = await fetch(`${server.url}/api/turns/turn_a17/events`, { headers: { authorization: `Bearer ${token}` } });
const statuses = [...(await events.text()).matchAll(/^event: status\ndata: (.*)$/gm)].map((m) => JSON.parse(m[1] ?? '{}').status);
console.log('statuses', statuses.join(' → '));
console.log('bad body', JSON.stringify((await api('POST', '/turns', { agent: 42 })).body));

await server.close();
await worker.stop();
await store.close();
