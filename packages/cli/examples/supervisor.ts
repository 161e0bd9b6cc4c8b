// A supervisor that delegates the research to one agent and hands the answer off to another, each
// agent with its own scripted model (docs/agents.md). No key, no network:
//
//   turnkit run packages/cli/examples/supervisor.ts

import { defineTool } from '@turnkit/dispatch';
import { call, scriptedModel, text, toolCalls } from '@turnkit/testing';
import { z } from 'zod';
import type { ScenarioFile } from '@turnkit/cli';

const search = defineTool({
  name: 'search',
  description: 'Searches the library notes.',
  input: z.object({ q: z.string() }),
  readOnly: true,
  execute: ({ q }) => `notes on ${q}: the Golden Gate Bridge opened on 27 May 1937`,
});

export const scenario: ScenarioFile = {
  name: 'supervisor',
  system: 'You lead a small team: delegate research, then hand off to the writer.',
  input: 'When did the Golden Gate Bridge open?',
  tools: [],
  model: scriptedModel([
    toolCalls(call('transfer_task', { agent: 'researcher', task: 'When did the Golden Gate Bridge open?' })),
    toolCalls(call('handoff', { agent: 'writer' })),
  ]),
  delegates: [
    {
      name: 'researcher',
      description: 'Looks facts up in the library notes.',
      system: 'You research. Answer with the facts you found.',
      model: scriptedModel([toolCalls(call('search', { q: 'Golden Gate Bridge' })), text('It opened on 27 May 1937.')]),
      tools: [search],
    },
  ],
  handoffs: [
    {
      name: 'writer',
      description: 'Writes the final answer for the user.',
      system: 'You write short, friendly answers.',
      model: scriptedModel([text('The Golden Gate Bridge opened on 27 May 1937.')]),
    },
  ],
};
