// Model-call retries are core's decision: a retryable `model_failed` is answered with the next
// `call_llm` (its `attempt` and `delayMs`), counted in usage and bounded by the limits.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseTurnState, step } from '@turnkit/core';
import type { Effect, JsonValue, TurnError, TurnState } from '@turnkit/core';
import { callingModel, drive, ev, fx, outcome, usage } from './helpers.js';

const rateLimited = (data?: JsonValue): TurnError => ({
  kind: 'rate_limited',
  message: 'Too many requests.',
  retryable: true,
  ...(data === undefined ? {} : { data }),
});
const failed = (error: TurnError, extra: Record<string, unknown> = {}) => ({ type: 'model_failed', error, ...extra });
const retry = (attempt: number, delayMs: number, error: TurnError, iteration = 1, final = false): Effect[] => [
  { type: 'emit', notice: { name: 'model_retry', data: { attempt, delayMs, error: error as unknown as JsonValue } } },
  { type: 'call_llm', request: { iteration, final, attempt, delayMs } },
];

describe('calling_model + model_failed (retryable) -> calling_model again', () => {
  it('retries with attempt 1 after the backoff, counting the call', () => {
    const error = rateLimited();
    const [next, effects] = step(callingModel(), failed(error));
    expect(effects).toEqual(retry(1, 500, error));
    expect(next.status).toBe('calling_model');
    expect(next.usage).toEqual(usage({ modelCalls: 2 }));
    expect(next.lastRequest).toEqual({ iteration: 1, final: false, attempt: 1, delayMs: 500 });
  });

  it('doubles the wait for each retry and fails once maxModelRetries retries are used', () => {
    const error = rateLimited();
    const [second, effects] = drive(callingModel({ maxModelRetries: 2, modelRetryBackoffMs: 100 }), failed(error), failed(error));
    expect(effects).toEqual(retry(2, 200, error));
    const [end, last] = step(second, failed(error));
    expect(last).toEqual([fx.done({ status: 'failed', error })]);
    expect(end.usage.modelCalls).toBe(3);
  });

  it('a reply after a retry goes on as usual, and the next round starts with no attempt', () => {
    const [afterRetry] = drive(callingModel(), failed(rateLimited()));
    const [next, effects] = step(afterRetry, ev.responded([], 'done'));
    expect(effects.at(-1)).toEqual(fx.check('done'));
    expect(next.status).toBe('finalizing');
    const [repair, repairEffects] = step(next, ev.rejected('use a list'));
    expect(repairEffects.at(-1)).toEqual(fx.callModel(1, false));
    expect(repair.lastRequest).toEqual({ iteration: 1, final: false });
  });

  it("waits the provider's retryAfterMs when it is longer than the backoff, at most 60 s", () => {
    const long = rateLimited({ retryAfterMs: 3_000 });
    expect(step(callingModel(), failed(long))[1]).toEqual(retry(1, 3_000, long));
    const short = rateLimited({ retryAfterMs: 10 });
    expect(step(callingModel(), failed(short))[1]).toEqual(retry(1, 500, short));
    const huge = rateLimited({ retryAfterMs: 3_600_000 });
    expect(step(callingModel(), failed(huge))[1]).toEqual(retry(1, 60_000, huge));
    const nonsense = rateLimited({ retryAfterMs: 'soon' });
    expect(step(callingModel(), failed(nonsense))[1]).toEqual(retry(1, 500, nonsense));
  });

  it('caps an exponential backoff at 60 s', () => {
    const error = rateLimited();
    const [next] = step(callingModel({ maxModelRetries: 40, modelRetryBackoffMs: 10_000 }), failed(error));
    const [, effects] = drive(next, failed(error), failed(error), failed(error));
    expect(effects).toEqual(retry(4, 60_000, error));
  });

  it('keeps a forced final call final and its model override on the retry', () => {
    const [forced] = drive(
      callingModel({ maxIterations: 1 }),
      ev.responded([{ id: 'a', name: 'search', input: {} }]),
      ev.completed([{ callId: 'a', name: 'search', output: 'x', isError: false }]),
      ev.compacted(),
    );
    expect(forced.lastRequest).toEqual({ iteration: 2, final: true });
    const error = rateLimited();
    expect(step(forced, failed(error))[1]).toEqual(retry(1, 500, error, 2, true));
    const overridden = { ...callingModel(), lastRequest: { iteration: 1, final: false, modelOverride: 'large' } };
    expect(step(overridden, failed(error))[1].at(-1)).toEqual({
      type: 'call_llm',
      request: { iteration: 1, final: false, modelOverride: 'large', attempt: 1, delayMs: 500 },
    });
  });

  it('does not retry an error that is not retryable', () => {
    const error = { kind: 'auth_failed', message: 'The API key was rejected.', retryable: false };
    expect(step(callingModel(), failed(error))[1]).toEqual([fx.done({ status: 'failed', error })]);
    const unmarked = { kind: 'model_error', message: 'boom' };
    expect(step(callingModel(), failed(unmarked))[1]).toEqual([fx.done({ status: 'failed', error: unmarked })]);
  });

  it('does not retry when maxModelCalls leaves no call for it: the turn fails with the model error', () => {
    const error = rateLimited();
    const [next, effects] = step(callingModel({ budget: { maxModelCalls: 1 } }), failed(error));
    expect(effects).toEqual([fx.done({ status: 'failed', error })]);
    expect(next.usage.modelCalls).toBe(1);
  });

  it('never retries after partial output reached a reader, and says why', () => {
    const error = rateLimited();
    const [next, effects] = step(callingModel(), failed(error, { partialOutput: true }));
    const message = 'Too many requests. Part of the reply had already been streamed to the reader, so the call is not retried.';
    expect(effects).toEqual([fx.done({ status: 'failed', error: { ...error, message, retryable: false } })]);
    expect(next.status).toBe('failed');
    expect(step(callingModel(), failed(error, { partialOutput: false }))[1]).toEqual(retry(1, 500, error));
  });

  it('a partialOutput that is not a boolean is a malformed event', () => {
    const [next] = step(callingModel(), failed(rateLimited(), { partialOutput: 'yes' }));
    expect(next.outcome).toMatchObject(
      outcome.failed('unexpected_event', expect.stringContaining('model_failed.partialOutput must be a boolean') as never),
    );
  });

  it('a retry survives a JSON round trip of the state, and resume re-issues it as it was', () => {
    const [next] = step(callingModel(), failed(rateLimited()));
    const saved = parseTurnState(JSON.parse(JSON.stringify(next)));
    expect(saved).toEqual(next);
    expect(() => parseTurnState({ ...next, lastRequest: { iteration: 1, final: false, attempt: 0, delayMs: 5 } })).toThrow(
      /lastRequest.attempt' must be at least 1/,
    );
    expect(() => parseTurnState({ ...next, lastRequest: { iteration: 1, final: false, attempt: 3, delayMs: 5 } })).toThrow(
      /lastRequest.attempt' is 3, past limits.maxModelRetries \(2\)/,
    );
    expect(() => parseTurnState({ ...next, lastRequest: { iteration: 1, final: false, attempt: 1 } })).toThrow(
      /lastRequest.delayMs/,
    );
  });
});

describe('property: retries stay within the limits', () => {
  it('a run of retryable failures never makes more than 1 + maxModelRetries calls, nor more than maxModelCalls (numRuns 300)', () => {
    fc.assert(
      fc.property(
        fc.nat({ max: 6 }),
        fc.option(fc.nat({ max: 8 }), { nil: undefined }),
        fc.nat({ max: 10 }),
        fc.array(fc.boolean(), { minLength: 1, maxLength: 12 }),
        fc.option(fc.integer({ min: -5, max: 120_000 }), { nil: undefined }),
        (maxModelRetries, maxModelCalls, backoff, retryables, retryAfterMs) => {
          const budget = maxModelCalls === undefined ? {} : { maxModelCalls };
          let state: TurnState = drive(callingModel({ maxModelRetries, modelRetryBackoffMs: backoff, budget }))[0];
          if (state.status !== 'calling_model') return; // maxModelCalls 0: no call at all
          let calls = 1;
          for (const retryable of retryables) {
            if (state.status !== 'calling_model') break;
            const error: TurnError = {
              kind: 'x',
              message: 'y',
              retryable,
              ...(retryAfterMs === undefined ? {} : { data: { retryAfterMs } }),
            };
            const [next, effects] = step(state, failed(error));
            const call = effects.find((e) => e.type === 'call_llm');
            if (call !== undefined) {
              calls += 1;
              expect(retryable).toBe(true);
              const request = (call as Extract<Effect, { type: 'call_llm' }>).request;
              expect(request.attempt).toBe(calls - 1);
              expect(request.delayMs).toBeGreaterThanOrEqual(0);
              expect(request.delayMs).toBeLessThanOrEqual(60_000);
            } else expect(next.status).toBe('failed');
            state = next;
          }
          expect(calls).toBeLessThanOrEqual(1 + maxModelRetries);
          if (maxModelCalls !== undefined) expect(state.usage.modelCalls).toBeLessThanOrEqual(maxModelCalls);
          expect(state.usage.modelCalls).toBe(calls);
        },
      ),
      { numRuns: 300 },
    );
  });
});
