// Approvals in a whole turn: one final decision record per call, per-call await, decisions given
// up front, grants that belong to the turn, capped rejection reasons, and sealed suspended turns.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { MIN_SEAL_SECRET_BYTES } from '@turnkit/core/internal';
import { SealError } from '@turnkit/core';
import { createDispatcher, defineTool, type BeforeHook } from '@turnkit/dispatch';
import type { DecisionRecord } from '@turnkit/dispatch/internal';
import { resumeTurn, runTurn } from '@turnkit/inline';
import { call, scriptedModel, text, toolCalls, transcriptLines } from '@turnkit/testing';

const ran: string[] = [];
const deploy = defineTool({
  name: 'deploy',
  description: 'Deploys.',
  input: z.object({ service: z.string() }),
  needsApproval: true,
  execute: ({ service }) => (ran.push(service), `deployed ${service}`),
});

function recorded() {
  const records: DecisionRecord[] = [];
  const dispatcher = createDispatcher({ tools: [deploy], onDecision: (r) => records.push(r) });
  const finals = () => records.filter((r) => r.decision !== 'ask').map((r) => `${r.callId} ${r.decision} ${r.source}`);
  return { records, dispatcher, finals };
}

const twoDeploys = () =>
  scriptedModel([toolCalls(call('deploy', { service: 'api' }), call('deploy', { service: 'db' })), text('done')]);

describe('one final decision record per call', () => {
  it('a person decides: user_approved when it runs, user_rejected at once', async () => {
    const { dispatcher, finals } = recorded();
    await runTurn({
      model: twoDeploys(),
      tools: dispatcher,
      input: 'go',
      approve: () => ({ call_1: { type: 'approve' }, call_2: { type: 'reject', reason: 'not db' } }),
    });
    expect(finals()).toEqual(['call_2 user_rejected user', 'call_1 user_approved user']);
  });

  it('an approval the callback leaves out expires with its own source', async () => {
    const { dispatcher, finals } = recorded();
    const result = await runTurn({
      model: twoDeploys(),
      tools: dispatcher,
      input: 'go',
      approve: () => ({ call_1: { type: 'approve' } }),
    });
    expect(finals()).toEqual(['call_2 deny approval_expired', 'call_1 user_approved user']);
    expect(transcriptLines(result.transcript)).toContain(
      'tool call_2 deploy: error rejected: approval expired. A person declined this call; do not retry it unchanged.',
    );
  });

  it('an approve callback that fails rejects the calls, recorded as approve_failed', async () => {
    const { dispatcher, finals } = recorded();
    await runTurn({
      model: twoDeploys(),
      tools: dispatcher,
      input: 'go',
      approve: () => {
        throw new Error('approval service down');
      },
    });
    expect(finals()).toEqual(['call_1 deny approve_failed', 'call_2 deny approve_failed']);
  });

  it('a cancel while parked gives every waiting call a cancelled record, an approved one included', async () => {
    const { dispatcher, finals } = recorded();
    const controller = new AbortController();
    const result = await runTurn({
      model: twoDeploys(),
      tools: dispatcher,
      input: 'go',
      signal: controller.signal,
      approve: async () => {
        // The first call is approved, the second awaited elsewhere; then the turn is cancelled.
        return { call_1: { type: 'approve' }, call_2: { type: 'await' } };
      },
      whenUndecided: 'await',
    });
    expect(result.status).toBe('suspended');
    const resumed = await resumeTurn({
      ...JSON.parse(JSON.stringify(result)),
      model: twoDeploys(),
      tools: dispatcher,
      signal: AbortSignal.abort('the user left'),
    });
    expect(resumed.status).toBe('cancelled');
    // call_1 was approved but never ran: its final record is the cancel too.
    expect(finals()).toEqual(['call_1 deny cancelled', 'call_2 deny cancelled']);
  });

  it('an approval that arrives after the turn was cancelled decides nothing and grants nothing', async () => {
    const { dispatcher, finals } = recorded();
    const controller = new AbortController();
    const result = await runTurn({
      id: 'late',
      model: twoDeploys(),
      tools: dispatcher,
      input: 'go',
      signal: controller.signal,
      approve: async () => {
        controller.abort('stop');
        await new Promise((r) => setTimeout(r, 1));
        return { call_1: { type: 'approve', remember: 'tool' }, call_2: { type: 'approve', remember: 'tool' } };
      },
    });
    expect(result.status).toBe('cancelled');
    expect(finals()).toEqual(['call_1 deny cancelled', 'call_2 deny cancelled']);
    expect(dispatcher.grants({ turnId: 'late' })).toEqual([]);
  });
});

describe('per-call await and decisions up front', () => {
  it('the callback decides some calls now and leaves others for a person elsewhere: the turn suspends with those only', async () => {
    ran.length = 0;
    const { dispatcher } = recorded();
    const first = await runTurn({
      model: twoDeploys(),
      tools: dispatcher,
      input: 'go',
      approve: (pending) => {
        expect(pending.map((p) => p.call.id)).toEqual(['call_1', 'call_2']);
        return { call_1: { type: 'approve' }, call_2: { type: 'await' } };
      },
    });
    expect(first.status).toBe('suspended');
    expect(first.pending?.map((p) => p.call.id)).toEqual(['call_2']);
    expect(ran).toEqual([]);
    const second = await resumeTurn({
      ...JSON.parse(JSON.stringify(first)),
      model: scriptedModel([text('done')]),
      tools: dispatcher,
      decisions: { call_2: { type: 'approve' } },
    });
    expect(second.status).toBe('stopped');
    expect(ran).toEqual(['api', 'db']);
  });

  it("whenUndecided: 'await' makes a call the callback leaves out wait instead of expiring", async () => {
    const result = await runTurn({
      model: twoDeploys(),
      tools: [deploy],
      input: 'go',
      approve: () => ({ call_1: { type: 'reject' } }),
      whenUndecided: 'await',
    });
    expect(result.status).toBe('suspended');
    expect(result.pending?.map((p) => p.call.id)).toEqual(['call_2']);
  });

  it('a decision given up front decides one call: a later call that reuses the id still asks', async () => {
    ran.length = 0;
    const result = await runTurn({
      model: scriptedModel([
        toolCalls(call('deploy', { service: 'api' })),
        toolCalls(call('deploy', { service: 'prod' }, { id: 'call_1' })),
        text('done'),
      ]),
      tools: [deploy],
      input: 'go',
      decisions: { call_1: { type: 'approve' } },
    });
    expect(ran).toEqual(['api']);
    expect(result.status).toBe('suspended');
    expect(result.pending?.map((p) => p.input)).toEqual([{ service: 'prod' }]);
  });

  it('decisions given up front decide the calls without asking anyone', async () => {
    ran.length = 0;
    const { dispatcher, finals } = recorded();
    const result = await runTurn({
      model: twoDeploys(),
      tools: dispatcher,
      input: 'go',
      decisions: { call_1: { type: 'approve' }, call_2: { type: 'reject', reason: 'only api' } },
      approve: () => {
        throw new Error('must not be asked');
      },
    });
    expect(result.status).toBe('stopped');
    expect(ran).toEqual(['api']);
    expect(finals()).toEqual(['call_1 user_approved user:up_front', 'call_2 user_rejected user:up_front']);
  });
});

describe('what a person approves is what runs', () => {
  it('the approval request shows the input the hooks left, which runs, and the hook fires once', async () => {
    ran.length = 0;
    let fired = 0;
    const canary: BeforeHook = {
      name: 'canary',
      run: ({ input }) => {
        fired++;
        return { kind: 'rewrite', input: { service: `${(input as { service: string }).service}-canary` } };
      },
    };
    const shown: unknown[] = [];
    await runTurn({
      model: scriptedModel([toolCalls(call('deploy', { service: 'api' })), text('done')]),
      tools: [deploy],
      hooks: { before: [canary] },
      input: 'go',
      approve: (pending) => {
        shown.push(...pending.map((p) => p.input));
        return { call_1: { type: 'approve' } };
      },
    });
    expect(shown).toEqual([{ service: 'api-canary' }]);
    expect(ran).toEqual(['api-canary']);
    expect(fired).toBe(1);
  });

  it('a rejection reason reaches the model without control characters, capped', async () => {
    const result = await runTurn({
      model: scriptedModel([toolCalls(call('deploy', { service: 'api' })), text('ok')]),
      tools: [deploy],
      input: 'go',
      approve: () => ({ call_1: { type: 'reject', reason: `\u001b[2J\u202eno${'!'.repeat(1000)}` } }),
    });
    const line = transcriptLines(result.transcript).find((l) => l.startsWith('tool call_1')) ?? '';
    expect(line).not.toMatch(/[\u0000-\u001f\u202e]/);
    expect(line.length).toBeLessThan(320);
    expect(line).toContain('rejected: [2J no!!!');
  });
});

describe('remembered grants belong to the turn', () => {
  it('approve-and-remember in one turn does not approve the tool in another turn of the same dispatcher', async () => {
    const { dispatcher } = recorded();
    const one = scriptedModel([
      toolCalls(call('deploy', { service: 'a' })),
      toolCalls(call('deploy', { service: 'b' })),
      text('ok'),
    ]);
    const alice = await runTurn({
      id: 'alice',
      model: one,
      tools: dispatcher,
      input: 'go',
      approve: () => ({ call_1: { type: 'approve', remember: 'tool' } }),
    });
    expect(alice.status).toBe('stopped');
    const bob = await runTurn({
      id: 'bob',
      model: scriptedModel([toolCalls(call('deploy', { service: 'c' })), text('ok')]),
      tools: dispatcher,
      input: 'go',
    });
    expect(bob.status).toBe('suspended');
  });

  it('with a named session, its turns share the grant', async () => {
    const { dispatcher } = recorded();
    await runTurn({
      session: 'alice',
      model: scriptedModel([toolCalls(call('deploy', { service: 'a' })), text('ok')]),
      tools: dispatcher,
      input: 'go',
      approve: () => ({ call_1: { type: 'approve', remember: 'tool' } }),
    });
    const again = await runTurn({
      session: 'alice',
      model: scriptedModel([toolCalls(call('deploy', { service: 'b' })), text('ok')]),
      tools: dispatcher,
      input: 'go',
    });
    expect(again.status).toBe('stopped');
  });
});

describe('sealed suspended turns', () => {
  const secret = 'x'.repeat(MIN_SEAL_SECRET_BYTES);

  it('the example of docs/suspend-resume.md runs: sealed, sent through a client, resumed', async () => {
    const doc = readFileSync(new URL('../../../docs/suspend-resume.md', import.meta.url), 'utf8');
    const block = /## Sealed suspended turns[\s\S]*?```js\n([\s\S]*?)```/.exec(doc)?.[1] ?? '';
    expect(block).toContain('sealSecret: secret');
    process.env.TURN_SEAL_SECRET = secret;
    type Run = (...args: unknown[]) => Promise<{ result: { status: string } }>;
    const AsyncFunction = Object.getPrototypeOf(async () => undefined).constructor as new (...args: string[]) => Run;
    const example = new AsyncFunction(
      'runTurn',
      'resumeTurn',
      'model',
      'tools',
      'input',
      'decisions',
      `${block}\nreturn { result };`,
    );
    const { result } = await example(runTurn, resumeTurn, twoDeploys(), [deploy], 'go', {
      call_1: { type: 'approve' },
      call_2: { type: 'approve' },
    });
    expect(result.status).toBe('stopped');
    delete process.env.TURN_SEAL_SECRET;
  });

  const suspend = () => runTurn({ model: twoDeploys(), tools: [deploy], input: 'go', sealSecret: secret });

  it('a sealed result resumes with the same secret; its seal has a unique id', async () => {
    const [first, second] = [await suspend(), await suspend()];
    expect(first.seal?.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(first.seal?.id).not.toBe(second.seal?.id);
    const saved = JSON.parse(JSON.stringify(first));
    const done = await resumeTurn({
      ...saved,
      model: scriptedModel([text('done')]),
      tools: [deploy],
      sealSecret: secret,
      decisions: { call_1: { type: 'approve' }, call_2: { type: 'approve' } },
    });
    expect(done.status).toBe('stopped');
  });

  it('refuses a result whose state was edited, an unsealed one, and another secret', async () => {
    const saved = JSON.parse(JSON.stringify(await suspend()));
    const resumeWith = (changes: Record<string, unknown>, key = secret) =>
      resumeTurn({
        ...saved,
        ...changes,
        model: twoDeploys(),
        tools: [deploy],
        sealSecret: key,
        decisions: { call_1: { type: 'approve' } },
      });
    const editedState = structuredClone(saved.state);
    editedState.batch.parked[0].input = { service: 'prod' };
    await expect(resumeWith({ state: editedState })).rejects.toThrow(SealError);
    await expect(resumeWith({ grants: [{ scope: 'session' }] })).rejects.toThrow(/does not verify/);
    await expect(resumeWith({ seal: undefined })).rejects.toThrow(/has no seal/);
    await expect(resumeWith({}, 'y'.repeat(40))).rejects.toThrow(/does not verify/);
    await expect(resumeWith({}, 'short')).rejects.toThrow(/at least 32 bytes/);
  });
});
