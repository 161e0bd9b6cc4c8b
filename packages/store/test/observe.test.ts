// An agent's `observe`: hooks for each activation of a stored turn, and a trace context saved with
// the turn and handed to the next activation. Faults in the observer never reach the turn.
import { defineTool } from '@turnkit/dispatch';
import type { ToolExecution } from '@turnkit/dispatch/internal';
import { createWorker, openStore, type StoredActivation } from '@turnkit/store';
import type { ActivationObserver } from '../src/worker/observe.js';
import { call, scriptedModel, text, toolCalls } from '@turnkit/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';

const deploy = defineTool({
  name: 'deploy',
  description: 'Deploys a service.',
  input: z.object({ service: z.string() }),
  needsApproval: true,
  execute: ({ service }) => `deployed ${service}`,
});
const script = [toolCalls(call('deploy', { service: 'api' })), text('api is deployed.')];

let store: Awaited<ReturnType<typeof openStore>>;
beforeAll(async () => {
  store = await openStore('memory://');
});
afterAll(async () => {
  await store.close();
});

interface Seen {
  activations: StoredActivation[];
  effects: string[][];
  steps: number[];
  executions: ToolExecution[];
  ends: string[];
}

function observing(seen: Seen, context: (n: number) => unknown): (a: StoredActivation) => ActivationObserver {
  return (activation) => {
    const n = seen.activations.push(activation) - 1;
    seen.effects[n] = [];
    seen.steps[n] = 0;
    return {
      hooks: {
        onEffect: (effect) => void seen.effects[n]?.push(effect.type),
        onStep: () => void (seen.steps[n] = (seen.steps[n] ?? 0) + 1),
        wrapExecution: async (execution, run) => {
          seen.executions.push(execution);
          return run();
        },
      },
      traceContext: () => context(n),
      end: ({ status }) => void seen.ends.push(status),
    };
  };
}

describe("an agent's observe", () => {
  it('sees each activation, its effects, steps and tool executions; what traceContext() returns reaches the next activation', async () => {
    const seen: Seen = { activations: [], effects: [], steps: [], executions: [], ends: [] };
    const agents = {
      deployer: { model: scriptedModel(script), tools: [deploy], observe: observing(seen, (n) => ({ activation: n })) },
    };
    const id = await store.submit({ agent: 'deployer', input: 'Deploy api.' });
    await createWorker({ store, agents }).runUntilIdle();
    expect((await store.get(id))?.status).toBe('awaiting_approval');
    await store.decide(id, { call_1: { type: 'approve' } });
    // The second activation runs in a new worker with a new model that continues the script.
    const next = { deployer: { ...agents.deployer, model: scriptedModel(script, { startAt: 1 }) } };
    await createWorker({ store, agents: next }).runUntilIdle();
    expect((await store.get(id))?.status).toBe('stopped');

    expect(seen.activations.map((a) => [a.turnId, a.agent, a.traceContext])).toEqual([
      [id, 'deployer', null],
      [id, 'deployer', { activation: 0 }],
    ]);
    expect(seen.activations[1]?.transcript.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(seen.ends).toEqual(['suspended', 'stopped']);
    expect(seen.effects[0]).toContain('call_llm');
    expect(seen.effects[1]).toContain('execute_approved');
    expect(seen.steps[0]).toBeGreaterThan(0);
    expect(seen.executions.map((e) => [e.turnId, e.tool, e.call.id])).toEqual([[id, 'deploy', 'call_1']]);
  });

  it('a trace context that is not JSON, or larger than 4 KB, is reported and not saved; the turn runs on', async () => {
    const cases: [() => unknown, string][] = [
      [
        () => ({ big: 1n }),
        'observe: traceContext() failed or is not JSON (Do not know how to serialize a BigInt); it was not saved.',
      ],
      [
        () => ({ text: 'x'.repeat(5000) }),
        'observe: traceContext() returned 5011 characters of JSON, more than 4096; it was not saved.',
      ],
    ];
    for (const [bad, message] of cases) {
      const seen: Seen = { activations: [], effects: [], steps: [], executions: [], ends: [] };
      const errors: string[] = [];
      const agents = { deployer: { model: scriptedModel(script), tools: [deploy], observe: observing(seen, bad) } };
      const id = await store.submit({ agent: 'deployer', input: 'Deploy api.' });
      await createWorker({ store, agents, onError: (e) => void errors.push(String(e)) }).runUntilIdle();
      await store.decide(id, { call_1: { type: 'approve' } });
      const next = { deployer: { ...agents.deployer, model: scriptedModel(script, { startAt: 1 }) } };
      await createWorker({ store, agents: next, onError: (e) => void errors.push(String(e)) }).runUntilIdle();
      expect((await store.get(id))?.status).toBe('stopped');
      expect(seen.activations[1]?.traceContext).toBeNull();
      expect(errors).toEqual([`Error: ${message}`, `Error: ${message}`]);
    }
  });

  it('an observe that throws is reported and the turn runs without it; hooks and end that throw never reach the turn', async () => {
    const errors: string[] = [];
    const throwing = () => {
      throw new Error('observer broke');
    };
    const failing: ActivationObserver = { hooks: { onEffect: throwing, onStep: throwing }, end: throwing };
    for (const observe of [throwing, () => failing]) {
      const id = await store.submit({ agent: 'greeter', input: 'Hi.' });
      await createWorker({
        store,
        agents: { greeter: { model: scriptedModel([text('Hello.')]), observe } },
        onError: (e) => void errors.push(String(e)),
      }).runUntilIdle();
      expect((await store.get(id))?.status).toBe('stopped');
    }
    expect(errors).toEqual([
      expect.stringContaining("Agent 'greeter': observe threw (observer broke); the turn runs without its observer."),
      expect.stringContaining('observer broke'),
    ]);
  });
});
