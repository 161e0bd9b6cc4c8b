// A user's project: packages/cli/test/registry.test.ts copies this file into a fresh project that
// installed the @turnkit packages by name from a local registry, type-checks it there (strict,
// exactOptionalPropertyTypes), runs it and reads the JSON it prints.
import { createTurn, step } from '@turnkit/core';
import { defineTool } from '@turnkit/dispatch';
import { resumeTurn, runTurn } from '@turnkit/inline';
import { streamTurn } from '@turnkit/stream';
import { call, scriptedModel, text, toolCalls, transcriptLines } from '@turnkit/testing';
import { arbitraryEvent, exploreTurn } from '@turnkit/check';
import { fromAISDK } from '@turnkit/ai-sdk';
import { EXIT, loadScenarioFile, type ScenarioFile } from '@turnkit/cli';
import { claimable, openHold, protocolStep } from '@turnkit/store/internal';
import { z } from 'zod';

const add = defineTool({
  name: 'add',
  description: 'Adds two numbers.',
  input: z.object({ a: z.number(), b: z.number() }),
  readOnly: true,
  execute: ({ a, b }) => a + b,
});
const deploy = defineTool({
  name: 'deploy',
  description: 'Deploys a service.',
  input: z.object({ service: z.string() }),
  needsApproval: true,
  execute: ({ service }) => `deployed ${service}`,
});

// A turn with a tool.
const ran = await runTurn({
  model: scriptedModel([toolCalls(call('add', { a: 1, b: 2 })), text('3')]),
  tools: [add],
  input: 'What is 1 + 2?',
});

// A streamed turn.
const stream = streamTurn({
  model: scriptedModel([toolCalls(call('add', { a: 2, b: 2 })), text('4')]),
  tools: [add],
  input: 'What is 2 + 2?',
});
const events: string[] = [];
for await (const event of stream) events.push(event.type);
const streamed = await stream.result;

// An approval: the turn suspends on the call, and the suspended result goes back into resumeTurn.
const model = scriptedModel([toolCalls(call('deploy', { service: 'api' })), text('Deployed.')]);
const suspended = await runTurn({ model, tools: [deploy], input: 'Deploy the api.' });
if (suspended.status !== 'suspended') throw new Error(`expected a suspended turn, got ${suspended.status}`);
const resumed = await resumeTurn({ ...suspended, model, tools: [deploy], decisions: { call_1: { type: 'approve' } } });

// The other packages load and work.
const [state] = step(createTurn({ id: 'turn-1' }), { type: 'start', input: 'hi' });
const explored = exploreTurn({ limits: { maxIterations: 1, loopThreshold: 2, maxOutputRepairs: 0 }, maxDepth: 6 });
const scenario: ScenarioFile = { model: scriptedModel([text('hi')]), tools: [add], input: 'hi' };
// The store's internal subpath (the CLI's `check --store` loads it) resolves from the published package.
const [, afterWrite] = protocolStep(openHold('turn-1', 3), { type: 'write', terminal: false, release: false });

console.log(
  JSON.stringify({
    ran: { status: ran.status, output: ran.output, lines: transcriptLines(ran.transcript) },
    streamed: { status: streamed.status, output: streamed.output, events: [...new Set(events)] },
    suspended: { status: suspended.status, pending: suspended.pending?.map((p) => p.call.name) ?? [] },
    resumed: { status: resumed.status, output: resumed.output, lines: transcriptLines(resumed.transcript) },
    core: state.status,
    check: { states: explored.states, violations: explored.violationCount, arbitrary: typeof arbitraryEvent },
    aiSdk: typeof fromAISDK,
    cli: { loadScenarioFile: typeof loadScenarioFile, suspendedExit: EXIT.suspended, scenarioInput: scenario.input },
    protocol: { effects: afterWrite, claimable: claimable({ runnable: true, leaseExpiresAt: 5, runAfter: null }, 10) },
  }),
);
