import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ApprovalDecision, ParkedCall, ToolSpec } from '@turnkit/core';
import { createAgent, runTurn, type AgentOptions } from '@turnkit/inline';
import { call, fail, scriptedModel, text, toolCalls, transcriptLines, type ScriptStep } from '@turnkit/testing';
import { testLog } from '../../../test-log.ts';
import { add, deploy } from './run-tools.ts';

const NUM_RUNS = 100;

describe('createAgent', () => {
  it('runs a turn per input with the options it was made with', async () => {
    const agent = createAgent({ model: scriptedModel([]), tools: [add], system: 'Be brief.' });
    const first = await agent.run('1 + 2?', { model: scriptedModel([toolCalls(call('add', { a: 1, b: 2 })), text('3')]) });
    const second = await agent.run('and 2 + 2?', {
      model: scriptedModel([toolCalls(call('add', { a: 2, b: 2 })), text('4')]),
      transcript: first.transcript,
    });
    expect(second.status).toBe('stopped');
    expect(transcriptLines(second.transcript)).toEqual([
      'system: Be brief.',
      'user: 1 + 2?',
      'assistant: [call_1 add]',
      'tool call_1 add: ok 3',
      'assistant: 3',
      'user: and 2 + 2?',
      'assistant: [call_1 add]',
      'tool call_1 add: ok 4',
      'assistant: 4',
    ]);
    expect(first.state.id).not.toBe(second.state.id);
  });

  it('offers every turn the same tool specs, JSON Schemas built once', async () => {
    const seen: ToolSpec[][] = [];
    const model = scriptedModel([
      (request) => {
        seen.push([...request.tools]);
        return text('ok');
      },
    ]);
    const agent = createAgent({ model, tools: [add, deploy] });
    await agent.run('a');
    await agent.run('b', {
      model: scriptedModel([
        (request) => {
          seen.push([...request.tools]);
          return text('ok');
        },
      ]),
    });
    expect(seen).toHaveLength(2);
    expect(seen[1]?.map((t) => t.name)).toEqual(['add', 'deploy']);
    seen[1]?.forEach((spec, i) => {
      expect(spec.inputSchema).toBe(seen[0]?.[i]?.inputSchema);
    });
  });

  it('keeps each turn its own: a grant remembered in one turn does not approve a call in the next', async () => {
    const agent = createAgent({ model: scriptedModel([]), tools: [deploy] });
    const script = (): ScriptStep[] => [toolCalls(call('deploy', { service: 'api' })), text('done')];
    const approving = await agent.run('deploy', {
      model: scriptedModel(script()),
      approve: (pending) => Object.fromEntries(pending.map((p) => [p.call.id, { type: 'approve', remember: 'session' }])),
    });
    expect(approving.status).toBe('stopped');
    const next = await agent.run('deploy again', { model: scriptedModel(script()) });
    expect(next.status).toBe('suspended');
    expect(next.pending?.map((p) => p.call.name)).toEqual(['deploy']);
    expect(next.grants).toEqual([]);
  });

  it('resumes a suspended turn with its own options', async () => {
    const agent = createAgent({ model: scriptedModel([]), tools: [deploy] });
    const model = scriptedModel([toolCalls(call('deploy', { service: 'api' })), text('deployed')]);
    const suspended = await agent.run('deploy', { model });
    expect(suspended.status).toBe('suspended');
    const resumed = await agent.resume({
      ...JSON.parse(JSON.stringify(suspended)),
      model,
      decisions: { call_1: { type: 'approve' } },
    });
    expect(resumed.status).toBe('stopped');
    expect(transcriptLines(resumed.transcript).slice(-2)).toEqual([
      'tool call_1 deploy: ok "deployed api"',
      'assistant: deployed',
    ]);
  });

  it('checks its options once, when it is made, naming the bad one', () => {
    expect(() => createAgent({ model: {} as never })).toThrow(/createAgent option `model`/);
    expect(() => createAgent({ model: scriptedModel([]), tools: 'add' as never })).toThrow(/createAgent option `tools`/);
    expect(() => createAgent({ model: scriptedModel([]), tools: [add, add] })).toThrow(TypeError);
    expect(() => createAgent({ model: scriptedModel([]), limits: { maxIterations: 0 } })).toThrow(RangeError);
    expect(() => createAgent({ model: scriptedModel([]), alwaysOffer: ['nope'] })).toThrow(/alwaysOffer/);
    expect(() => createAgent({ model: scriptedModel([]), input: 'hi' } as AgentOptions)).toThrow(
      /`input` belongs to each run: pass it to agent.run\(input, \{ input \}\)/,
    );
  });

  it('refuses a run without a string input or with a bad per-run option', async () => {
    const agent = createAgent({ model: scriptedModel([text('ok')]) });
    await expect(agent.run(42 as never)).rejects.toThrow(/agent.run\(input\) needs the input as a string/);
    await expect(agent.run('x', { model: {} as never })).rejects.toThrow(/agent.run option `model`/);
    await expect(agent.run('x', { transcript: 'earlier' as never })).rejects.toThrow(/agent.run option `transcript`/);
  });
});

const anyStep: fc.Arbitrary<ScriptStep> = fc.oneof(
  { weight: 2, arbitrary: fc.constantFrom('done', 'three').map((t) => text(t)) },
  {
    weight: 3,
    arbitrary: fc
      .array(
        fc.oneof(
          fc.record({ a: fc.integer({ min: 0, max: 3 }), b: fc.integer({ min: 0, max: 3 }) }).map((input) => call('add', input)),
          fc.constant(call('deploy', { service: 'api' })),
          fc.constant(call('add', { a: 'x' })),
        ),
        { minLength: 1, maxLength: 2 },
      )
      .map((calls) => toolCalls(...calls)),
  },
  { weight: 1, arbitrary: fc.constant(fail('down')) },
);
const decide = (approve: boolean) => (pending: readonly ParkedCall[]) =>
  Object.fromEntries(pending.map((p): [string, ApprovalDecision] => [p.call.id, { type: approve ? 'approve' : 'reject' }]));

describe('an agent run and runTurn', () => {
  it('end every script the same way, turn after turn of one agent', async () => {
    testLog(`createAgent against runTurn over random scripts: numRuns ${NUM_RUNS}`);
    const agent = createAgent({
      model: scriptedModel([]),
      tools: [add, deploy],
      limits: { maxIterations: 3 },
      maxModelRetries: 0,
    });
    await fc.assert(
      fc.asyncProperty(fc.array(anyStep, { maxLength: 6 }), fc.boolean(), async (steps, approve) => {
        const viaAgent = await agent.run('go', { model: scriptedModel(steps), approve: decide(approve), id: 'turn' });
        const viaRunTurn = await runTurn({
          model: scriptedModel(steps),
          tools: [add, deploy],
          limits: { maxIterations: 3 },
          maxModelRetries: 0,
          approve: decide(approve),
          input: 'go',
          id: 'turn',
        });
        expect(viaAgent.status).toBe(viaRunTurn.status);
        expect(viaAgent.state).toEqual(viaRunTurn.state);
        expect(viaAgent.transcript).toEqual(viaRunTurn.transcript);
      }),
      { numRuns: NUM_RUNS },
    );
  });
});
