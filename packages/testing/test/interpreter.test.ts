import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createDispatcher, defineTool } from '@turnkit/dispatch';
import { call, fail, replay, scriptedModel, testTurn, text, toolCalls, transcriptLines } from '@turnkit/testing';

const add = defineTool({
  name: 'add',
  description: 'Adds.',
  input: z.object({ a: z.number(), b: z.number() }),
  readOnly: true,
  execute: ({ a, b }) => a + b,
});
const deploy = defineTool({
  name: 'deploy',
  description: 'Deploys.',
  input: z.object({}),
  needsApproval: true,
  execute: () => 'deployed',
});

describe('testTurn', () => {
  it('starts the turn and shows the first blocking effect', () => {
    const t = testTurn({ input: 'hi' });
    expect(t.state.status).toBe('calling_model');
    expect(t.blocking).toEqual({ type: 'call_llm', request: { iteration: 1, final: false } });
    expect(transcriptLines(t.transcript)).toEqual(['user: hi']);
  });

  it('takes events one at a time with send', () => {
    const t = testTurn({ input: 'hi' });
    t.send({ type: 'model_responded', response: { text: 'hello', toolCalls: [] } });
    expect(t.state.status).toBe('finalizing');
    expect(t.blocking).toEqual({ type: 'check_output', candidate: 'hello' });
    t.send({ type: 'output_accepted', output: 'hello' });
    expect(t.state.outcome).toEqual({ status: 'stopped', stopReason: 'completed', output: 'hello' });
  });

  it('maps a model error as every interpreter does (turnError and retryable kept)', async () => {
    const limited = Object.assign(new Error('slow down'), {
      turnError: { kind: 'rate_limited', message: 'slow down', retryable: true },
    });
    const t = testTurn({ input: 'hi', model: scriptedModel([fail(limited)]), limits: { maxModelRetries: 0 } });
    await t.runUntil();
    expect(t.state.outcome).toEqual({ status: 'failed', error: { kind: 'rate_limited', message: 'slow down', retryable: true } });
  });

  it("answers core's retries without waiting their delay (the delay is on the effect)", async () => {
    const limited = Object.assign(new Error('slow down'), { retryable: true });
    const model = scriptedModel([fail(limited), fail(limited), text('ok')]);
    // A minute per retry: runUntil would time out if it waited.
    const t = testTurn({ input: 'hi', model, limits: { modelRetryBackoffMs: 60_000 } });
    const delays: Array<number | undefined> = [];
    await t.runUntil((turn) => {
      const blocking = turn.blocking;
      if (blocking?.type === 'call_llm') delays.push(blocking.request.delayMs);
      return false;
    });
    expect(delays).toEqual([undefined, 60_000, 60_000]);
    expect(t.state.outcome).toEqual({ status: 'stopped', stopReason: 'completed', output: 'ok' });
    expect(model.calls).toHaveLength(3);
  });

  it('runs with a model and dispatcher until the predicate holds', async () => {
    const model = scriptedModel([toolCalls(call('add', { a: 1, b: 2 })), text('3')]);
    const t = testTurn({ input: 'add', model, dispatcher: createDispatcher({ tools: [add] }) });
    await t.runUntil((turn) => turn.state.status === 'steering');
    expect(t.state.round).toBe(1);
    expect(transcriptLines(t.transcript).at(-1)).toBe('tool call_1 add: ok 3');
    await t.runUntil();
    expect(t.state.status).toBe('stopped');
    expect(model.calls[1]?.tools.map((s) => s.name)).toEqual(['add']);
    expect(replay(t.trace()).ok).toBe(true);
  });

  it('uses respond first and falls back for effects it leaves', async () => {
    const t = testTurn({
      input: 'x',
      model: scriptedModel([text('not json')]),
      respond: (effect) => (effect.type === 'check_output' ? { type: 'output_rejected', reason: 'JSON please' } : undefined),
      limits: { maxOutputRepairs: 0 },
    });
    await t.runUntil();
    expect(t.state.outcome).toMatchObject({ status: 'failed', error: { kind: 'output_invalid' } });
  });

  it('stops at a parked turn, which a test can then decide', async () => {
    const t = testTurn({
      input: 'ship',
      model: scriptedModel([toolCalls(call('deploy')), text('shipped')]),
      dispatcher: createDispatcher({ tools: [deploy] }),
    });
    await t.runUntil();
    expect(t.state.status).toBe('awaiting_approval');
    expect(t.blocking).toBeNull();
    t.send({ type: 'approvals_decided', decisions: { call_1: { type: 'approve' } } });
    expect(t.blocking?.type).toBe('execute_approved');
    await t.runUntil();
    expect(t.state.outcome).toMatchObject({ status: 'stopped', output: 'shipped' });
  });

  it('cancelBatch ends the batch in flight and the turn goes on: the next model call sees the cancelled results', async () => {
    const model = scriptedModel([toolCalls(call('add', { a: 1, b: 2 })), text('I could not add them.')]);
    const t = testTurn({ input: 'add', model, dispatcher: createDispatcher({ tools: [add] }) });
    await t.runUntil((turn) => turn.blocking?.type === 'dispatch_tools');
    t.cancelBatch('the user moved on');
    expect(t.state.status).toBe('steering');
    await t.runUntil();
    expect(t.state.outcome).toMatchObject({ status: 'stopped', stopReason: 'completed', output: 'I could not add them.' });
    const seen = model.calls[1]?.messages.at(-1);
    expect(seen).toEqual({
      role: 'tool',
      result: {
        callId: 'call_1',
        name: 'add',
        isError: true,
        errorKind: 'cancelled',
        output:
          'cancelled: the tool batch was cancelled (the user moved on) before this call finished; the turn goes on without its result.',
      },
    });
    expect(model.calls[1]?.tools.map((s) => s.name)).toEqual(['add']);
  });

  it('says what is missing when nothing can answer an effect', async () => {
    const t = testTurn({ input: 'x' });
    await expect(t.runUntil()).rejects.toThrow("nothing answers 'call_llm'. Pass a model");
  });

  it('maps a model error to model_failed', async () => {
    const t = testTurn({ input: 'x', model: scriptedModel([]) });
    await t.runUntil();
    expect(t.state.outcome).toMatchObject({
      status: 'failed',
      error: { kind: 'model_error', message: expect.stringContaining('step 1') },
    });
  });
});
