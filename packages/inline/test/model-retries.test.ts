import { describe, expect, it } from 'vitest';
import type { Notice } from '@turnkit/core';
import { resumeTurn, runTurn } from '@turnkit/inline';
import { call, fail, scriptedModel, text, toolCalls } from '@turnkit/testing';
import { deploy, retryable } from './run-tools.ts';

describe('runTurn: model-call retries', () => {
  it('retries a retryable model error up to maxModelRetries times', async () => {
    const model = scriptedModel([fail(retryable('overloaded')), fail(retryable('overloaded')), text('ok')]);
    const result = await runTurn({ model, input: 'hi', modelRetryBackoffMs: 0 });
    expect(result.status).toBe('stopped');
    expect(result.output).toBe('ok');
    expect(model.calls).toHaveLength(3);
    // Core decides each retry: every one is a call_llm of its own and counts as a model call.
    expect(result.usage.modelCalls).toBe(3);
    expect(result.state.limits.modelRetryBackoffMs).toBe(0);
  });

  it('announces each retry with a model_retry notice and records it in the trace', async () => {
    const model = scriptedModel([fail(retryable('overloaded')), fail(retryable('overloaded')), text('ok')]);
    const notices: Notice[] = [];
    const result = await runTurn({
      model,
      input: 'hi',
      limits: { modelRetryBackoffMs: 1 },
      trace: true,
      onNotice: (n) => notices.push(n),
    });
    expect(notices.filter((n) => n.name === 'model_retry').map((n) => n.data)).toEqual([
      { attempt: 1, delayMs: 1, error: { kind: 'model_error', message: 'overloaded', retryable: true } },
      { attempt: 2, delayMs: 2, error: { kind: 'model_error', message: 'overloaded', retryable: true } },
    ]);
    const requests = result.trace?.entries
      .flatMap((e) => e.effects)
      .filter((e) => e.type === 'call_llm')
      .map((e) => e.request);
    expect(requests).toEqual([
      { iteration: 1, final: false },
      { iteration: 1, final: false, attempt: 1, delayMs: 1 },
      { iteration: 1, final: false, attempt: 2, delayMs: 2 },
    ]);
  });

  it('a cancel during the wait before a retry ends the turn at once, without calling the model again', async () => {
    const model = scriptedModel([fail(retryable('overloaded')), text('never')]);
    const controller = new AbortController();
    // A minute's wait: the turn only ends promptly because the wait is cancellable.
    const result = await runTurn({
      model,
      input: 'hi',
      limits: { modelRetryBackoffMs: 60_000 },
      signal: controller.signal,
      onNotice: (n) => (n.name === 'model_retry' ? controller.abort('user pressed stop') : undefined),
    });
    expect(result.status).toBe('cancelled');
    expect(result.reason).toBe('user pressed stop');
    expect(model.calls).toHaveLength(1);
  });

  it('maps the retry options into limits, and refuses one set both ways', async () => {
    const result = await runTurn({
      model: scriptedModel([text('ok')]),
      input: 'hi',
      maxModelRetries: 5,
      modelRetryBackoffMs: 10,
    });
    expect(result.state.limits).toMatchObject({ maxModelRetries: 5, modelRetryBackoffMs: 10 });
    await expect(
      runTurn({ model: scriptedModel([]), input: 'x', maxModelRetries: 1, limits: { maxModelRetries: 2 } }),
    ).rejects.toThrow(
      'runTurn: `maxModelRetries` is set both as an option and in `limits`; set it once, in `limits.maxModelRetries`.',
    );
  });

  it('resumeTurn applies its retry options to the resumed turn', async () => {
    const suspended = await runTurn({
      model: scriptedModel([toolCalls(call('deploy', { service: 'api' }))]),
      tools: [deploy],
      input: 'deploy',
    });
    expect(suspended.status).toBe('suspended');
    const model = scriptedModel(
      [toolCalls(call('deploy', { service: 'api' })), fail(retryable('overloaded')), text('deployed')],
      { startAt: 1 },
    );
    const saved = JSON.parse(JSON.stringify(suspended));
    const resumed = await resumeTurn({
      ...saved,
      model,
      tools: [deploy],
      decisions: { call_1: { type: 'approve' } },
      maxModelRetries: 1,
      modelRetryBackoffMs: 0,
    });
    expect(resumed.state.limits).toMatchObject({ maxModelRetries: 1, modelRetryBackoffMs: 0 });
    expect(resumed.status).toBe('stopped');
    expect(resumed.output).toBe('deployed');
    expect(model.calls).toHaveLength(2);
  });

  it('gives up after maxModelRetries and keeps retryable on the error', async () => {
    const model = scriptedModel([fail(retryable('overloaded')), fail(retryable('overloaded')), text('never')]);
    const result = await runTurn({ model, input: 'hi', modelRetryBackoffMs: 0, maxModelRetries: 1 });
    expect(result.status).toBe('failed');
    expect(result.error).toEqual({ kind: 'model_error', message: 'overloaded', retryable: true });
    expect(model.calls).toHaveLength(2);
  });

  it('does not retry an error that is not retryable', async () => {
    const model = scriptedModel([fail(Object.assign(new Error('bad request'), { retryable: false })), text('never')]);
    const result = await runTurn({ model, input: 'hi', modelRetryBackoffMs: 0 });
    expect(result.error).toEqual({ kind: 'model_error', message: 'bad request', retryable: false });
    expect(model.calls).toHaveLength(1);
  });

  it('turns a thrown non-Error into a readable model_error', async () => {
    const model = scriptedModel([fail({ code: 42 })]);
    const result = await runTurn({ model, input: 'hi' });
    expect(result.error?.kind).toBe('model_error');
    expect(result.error?.message).toBe('{"code":42}');
  });
});
