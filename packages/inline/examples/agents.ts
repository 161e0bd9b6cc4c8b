import { z } from 'zod';
import { defineTool } from '@turnkit/dispatch';
import { runTurn, type NamedAgent } from '@turnkit/inline';
import { agentTimeline, call, scriptedModel, text, toolCalls } from '@turnkit/testing';

const search = defineTool({
  name: 'search',
  description: 'Searches the library notes.',
  input: z.object({ q: z.string() }),
  readOnly: true,
  execute: ({ q }) => `notes on ${q}: the Golden Gate Bridge opened on 27 May 1937`,
});

// Each agent has its own model (scripted here: the same replies on every run), prompt and tools.
const researcher: NamedAgent = {
  name: 'researcher',
  description: 'Looks facts up in the library notes.',
  system: 'You research. Answer with the facts you found.',
  model: scriptedModel([toolCalls(call('search', { q: 'Golden Gate Bridge' })), text('It opened on 27 May 1937.')]),
  tools: [search],
  limits: { maxIterations: 3 },
};
const writer: NamedAgent = {
  name: 'writer',
  description: 'Writes the final answer for the user.',
  system: 'You write short, friendly answers.',
  model: scriptedModel([text('The Golden Gate Bridge opened on 27 May 1937.')]),
};

// The supervisor delegates the research (a child turn) and hands the rest of the turn to the writer.
const supervisor = scriptedModel([
  toolCalls(call('transfer_task', { agent: 'researcher', task: 'When did the Golden Gate Bridge open?' })),
  toolCalls(call('handoff', { agent: 'writer' })),
]);

const timeline = agentTimeline('supervisor');
const result = await runTurn({
  name: 'supervisor',
  model: supervisor,
  system: 'You lead a small team: delegate research, then hand off to the writer.',
  delegates: [researcher],
  handoffs: [writer],
  limits: { budget: { maxModelCalls: 10 } },
  input: 'When did the Golden Gate Bridge open?',
  onEffect: timeline.onEffect,
});
console.log(timeline.lines().join('\n'));
console.log(result.status, result.usage.modelCalls, 'model calls:', result.output);
