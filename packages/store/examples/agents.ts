import { z } from 'zod';
import { defineTool } from '@turnkit/dispatch';
import { createWorker, openStore } from '@turnkit/store';
import { call, scriptedModel, text, toolCalls, transcriptLines } from '@turnkit/testing';

const publish = defineTool({
  name: 'publish',
  description: 'Publishes a page.',
  input: z.object({ title: z.string() }),
  needsApproval: true,
  execute: ({ title }) => `published ${title}`,
});

// Agents are registered by name; an agent names the agents it may delegate to (or hand off to) by theirs.
const agents = {
  supervisor: {
    model: scriptedModel([
      toolCalls(call('transfer_task', { agent: 'editor', task: 'Publish the bridge page.' })),
      text('The page is up.'),
    ]),
    system: 'You lead: give work to the editor.',
    delegates: ['editor'],
  },
  editor: {
    description: 'Publishes pages.',
    system: 'You publish pages.',
    model: scriptedModel([toolCalls(call('publish', { title: 'Bridge' })), text('Published.')]),
    tools: [publish],
  },
};

const store = await openStore('memory://');
const worker = createWorker({ store, agents });
const id = await store.submit({ agent: 'supervisor', input: 'Put the bridge page up.', id: 'launch' });
await worker.runUntilIdle();

// The editor's call waits for a person: the stored turn is parked (it holds no worker) and names whose call it is.
const parked = await store.get(id);
console.log(parked?.status, parked?.parked.map((p) => `${p.agentPath?.join(' > ')}: ${p.call.id} ${p.call.name}`));

// Decided through the store, by the child's call id: only the editor's call runs.
await store.decide(id, { call_1: { type: 'approve' } });
await worker.runUntilIdle();
const done = await store.get(id);
console.log(transcriptLines(done?.transcript ?? []).join('\n'));
for (const child of done?.children ?? [])
  console.log(`${child.agentPath.join(' > ')} (${child.id}):\n  ${transcriptLines(child.transcript).join('\n  ')}`);
console.log(done?.status, done?.toolCalls.map((c) => `${c.turn ?? id} ${c.callId} ${c.name}`));
await store.close();
