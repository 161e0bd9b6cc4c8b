// The worker is a thin driver over core: what a stored turn runs after a restart, and how it keys
// calls, is what core's `resume` and core's call identity say, never the store's own reading of
// the state. Each case here is a way a stored turn once acted on something nobody approved.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { JsonValue, Model, ModelRequest, ModelResponse, ToolCall } from '@turnkit/core';
import { defineTool } from '@turnkit/dispatch';
import { createWorker, openStore, type Store } from '@turnkit/store';

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 2000; i += 1) {
    if (await check()) return;
    await pause(10);
  }
  throw new Error(`gave up waiting for ${what}`);
}

/** A model that answers round n (counted by the tool results it was sent) with `rounds[n]`, then 'done'. */
function roundsModel(rounds: readonly (readonly ToolCall[])[]): Model {
  return {
    async generate(request: ModelRequest): Promise<ModelResponse> {
      const done = request.messages.filter((m) => m.role === 'assistant' && m.toolCalls.length > 0).length;
      const calls = rounds[done];
      return calls === undefined ? { text: 'done', toolCalls: [] } : { text: '', toolCalls: calls };
    },
  };
}

describe('a stored turn asks core what to run (PGlite)', () => {
  let store: Store;
  beforeAll(async () => void (store = await openStore('memory://')));
  afterAll(async () => store?.close());

  it('an approved call rewritten by a before-hook runs its approved input after the turn is handed back mid-tool', async () => {
    const ran: JsonValue[] = [];
    let hang = true;
    const shell = defineTool({
      name: 'shell',
      description: 'Runs a command.',
      input: z.object({ command: z.string() }),
      needsApproval: true,
      idempotent: true,
      execute: ({ command }, ctx) => {
        ran.push(command);
        if (!hang) return `ran ${command}`;
        return new Promise<string>((_resolve, reject) =>
          ctx.signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true }),
        );
      },
    });
    const agents = {
      ops: {
        model: roundsModel([[{ id: 'c1', name: 'shell', input: { command: 'rm -rf /srv/data' } }]]),
        tools: [shell],
        hooks: {
          before: [
            {
              name: 'dry-run',
              run: (info: { input: unknown }) => ({
                kind: 'rewrite' as const,
                input: { command: `${(info.input as { command: string }).command} --dry-run` },
              }),
            },
          ],
        },
      },
    };
    const id = await store.submit({ agent: 'ops', input: 'clean up' });
    await createWorker({ store, agents }).runUntilIdle();
    const parked = await store.get(id);
    expect(parked?.status).toBe('awaiting_approval');
    expect(parked?.parked[0]?.input).toEqual({ command: 'rm -rf /srv/data --dry-run' });
    await store.decide(id, { c1: { type: 'approve' } });
    // The first worker starts the approved call and is stopped with a deadline: the turn is handed back mid-tool.
    const first = createWorker({ store, agents, leaseMs: 60_000 });
    first.start();
    await waitFor(() => ran.length === 1, 'the approved call to start');
    await first.stop({ deadlineMs: 20 });
    hang = false;
    await createWorker({ store, agents, leaseMs: 60_000 }).runUntilIdle();
    expect((await store.get(id))?.status).toBe('stopped');
    // The idempotent call ran again on the second worker, with the input the person approved both times.
    expect(ran).toEqual(['rm -rf /srv/data --dry-run', 'rm -rf /srv/data --dry-run']);
  });

  it('a call id the model reuses in a later round is a new call: it runs, and is not answered from the journal', async () => {
    const refunds: number[] = [];
    const refund = defineTool({
      name: 'refund',
      description: 'Refunds an amount.',
      input: z.object({ amount: z.number() }),
      execute: ({ amount }) => {
        refunds.push(amount);
        return `refunded ${amount}`;
      },
    });
    const agents = {
      shop: {
        model: roundsModel([
          [{ id: 'call_1', name: 'refund', input: { amount: 10 } }],
          [{ id: 'call_1', name: 'refund', input: { amount: 5000 } }],
        ]),
        tools: [refund],
        permissions: { allow: ['refund'] },
      },
    };
    const id = await store.submit({ agent: 'shop', input: 'refund twice' });
    await createWorker({ store, agents }).runUntilIdle();
    const turn = await store.get(id);
    expect(turn?.status).toBe('stopped');
    expect(refunds).toEqual([10, 5000]);
    const results = turn?.transcript.flatMap((m) => (m.role === 'tool' ? [[m.result.callId, m.result.output]] : []));
    expect(results).toEqual([
      ['call_1', 'refunded 10'],
      ['call_1~2', 'refunded 5000'],
    ]);
  });

  it('a call id reused in a later round behind approval is listed as waiting, decided through store.decide, and runs', async () => {
    const refunds: number[] = [];
    const refund = defineTool({
      name: 'refund',
      description: 'Refunds an amount.',
      input: z.object({ amount: z.number() }),
      needsApproval: true,
      execute: ({ amount }) => {
        refunds.push(amount);
        return `refunded ${amount}`;
      },
    });
    const agents = {
      desk: {
        model: roundsModel([
          [{ id: 'call_1', name: 'refund', input: { amount: 10 } }],
          [{ id: 'call_1', name: 'refund', input: { amount: 5000 } }],
        ]),
        tools: [refund],
      },
    };
    const worker = createWorker({ store, agents });
    const id = await store.submit({ agent: 'desk', input: 'refund twice' });
    await worker.runUntilIdle();
    expect((await store.get(id))?.parked.map((p) => p.call.id)).toEqual(['call_1']);
    expect(await store.decide(id, { call_1: { type: 'approve' } })).toMatchObject({ accepted: ['call_1'] });
    await worker.runUntilIdle();
    const second = await store.get(id);
    expect(second?.status).toBe('awaiting_approval');
    expect(second?.parked.map((p) => [p.call.id, p.call.originalId])).toEqual([['call_1~2', 'call_1']]);
    expect(await store.decide(id, { 'call_1~2': { type: 'approve' } })).toMatchObject({ accepted: ['call_1~2'] });
    await worker.runUntilIdle();
    expect((await store.get(id))?.status).toBe('stopped');
    expect(refunds).toEqual([10, 5000]);
  });

  it('two calls with one id in a reply both run, each with its own result', async () => {
    const ran: string[] = [];
    const echo = defineTool({
      name: 'echo',
      description: 'Echoes.',
      input: z.object({ say: z.string() }),
      readOnly: true,
      execute: ({ say }) => {
        ran.push(say);
        return say;
      },
    });
    const agents = {
      llama: {
        model: roundsModel([
          [
            { id: '0', name: 'echo', input: { say: 'a' } },
            { id: '0', name: 'echo', input: { say: 'b' } },
          ],
        ]),
        tools: [echo],
      },
    };
    const id = await store.submit({ agent: 'llama', input: 'say a and b' });
    await createWorker({ store, agents }).runUntilIdle();
    const turn = await store.get(id);
    expect(turn?.status).toBe('stopped');
    expect(ran.sort()).toEqual(['a', 'b']);
    const results = turn?.transcript.flatMap((m) => (m.role === 'tool' ? [[m.result.callId, m.result.output]] : []));
    expect(results).toEqual([
      ['0', 'a'],
      ['0~2', 'b'],
    ]);
  });

  it('an approve-and-remember grant is written with the checkpoint and read back by the next worker that claims the turn', async () => {
    const ran: string[] = [];
    const tool = (name: string) =>
      defineTool({
        name,
        description: `${name}s a service.`,
        input: z.object({ service: z.string() }),
        needsApproval: true,
        execute: ({ service }) => {
          ran.push(`${name} ${service}`);
          return `${name} ${service}`;
        },
      });
    const agents = {
      deployer: {
        model: roundsModel([
          [{ id: 'd1', name: 'deploy', input: { service: 'api' } }],
          [{ id: 'r1', name: 'restart', input: { service: 'api' } }],
          [{ id: 'd2', name: 'deploy', input: { service: 'db' } }],
        ]),
        tools: [tool('deploy'), tool('restart')],
      },
    };
    const id = await store.submit({ agent: 'deployer', input: 'ship it' });
    await createWorker({ store, agents }).runUntilIdle();
    await store.decide(id, { d1: { type: 'approve', remember: 'tool' } });
    // A new worker applies the grant and parks again on `restart`, which the grant does not cover.
    await createWorker({ store, agents }).runUntilIdle();
    expect((await store.get(id))?.parked.map((p) => p.call.id)).toEqual(['r1']);
    await store.decide(id, { r1: { type: 'approve' } });
    // Another worker claims the turn: the grant it reads back lets `deploy db` run without asking.
    await createWorker({ store, agents }).runUntilIdle();
    const turn = await store.get(id);
    expect(turn?.status).toBe('stopped');
    expect(ran).toEqual(['deploy api', 'restart api', 'deploy db']);
  });
});

describe('approvals that expire in a stored turn (PGlite)', () => {
  let store: Store;
  beforeAll(async () => void (store = await openStore('memory://')));
  afterAll(async () => store?.close());

  const deployTool = (ran: string[], approvalTimeoutMs?: number) =>
    defineTool({
      name: 'deploy',
      description: 'Deploys a service.',
      input: z.object({ service: z.string() }),
      needsApproval: true,
      ...(approvalTimeoutMs === undefined ? {} : { approvalTimeoutMs }),
      execute: ({ service }) => {
        ran.push(service);
        return `deployed ${service}`;
      },
    });

  it('nobody decides: the worker wakes the turn at the deadline and the call is rejected as expired', async () => {
    const ran: string[] = [];
    const errors: string[] = [];
    const agents = {
      timed: {
        model: roundsModel([[{ id: 'd1', name: 'deploy', input: { service: 'api' } }]]),
        tools: [deployTool(ran)],
        approvalTimeoutMs: 300,
      },
    };
    const worker = createWorker({ store, agents, onError: (e) => errors.push(String(e)) });
    const id = await store.submit({ agent: 'timed', input: 'ship it' });
    await worker.runUntilIdle();
    const parked = await store.get(id);
    expect(parked?.status).toBe('awaiting_approval');
    const expiresAt = parked?.parked[0]?.expiresAt;
    expect(typeof expiresAt).toBe('number');
    worker.start();
    await waitFor(async () => (await store.get(id))?.status === 'stopped', 'the approval to expire and the turn to end');
    await worker.stop();
    const turn = await store.get(id);
    expect(ran).toEqual([]);
    const result = turn?.transcript.find((m) => m.role === 'tool');
    expect(result).toMatchObject({
      result: { callId: 'd1', isError: true, output: expect.stringMatching(/^rejected: approval expired/) },
    });
    expect(errors).toEqual([]);
  });

  it('a decision before the deadline is applied at once, and the deadline of a tool overrides the agent default', async () => {
    const ran: string[] = [];
    const agents = {
      patient: {
        model: roundsModel([[{ id: 'd1', name: 'deploy', input: { service: 'db' } }]]),
        tools: [deployTool(ran, 3_600_000)],
        approvalTimeoutMs: 50,
      },
    };
    const worker = createWorker({ store, agents });
    const id = await store.submit({ agent: 'patient', input: 'ship it' });
    await worker.runUntilIdle();
    const parked = await store.get(id);
    expect(parked?.parked[0]?.expiresAfterMs).toBe(3_600_000);
    await pause(100); // past the agent's 50 ms: the tool's hour applies
    await store.decide(id, { d1: { type: 'approve' } });
    await worker.runUntilIdle();
    expect((await store.get(id))?.status).toBe('stopped');
    expect(ran).toEqual(['db']);
  });
});
