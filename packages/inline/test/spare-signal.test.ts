// A turn nobody can cancel hands its model a signal that never aborts; when the turn ends and
// nobody listens on it, the next such turn hands out the same one instead of making another.
import type { Model, ModelResponse } from '@turnkit/core';
import { runTurn } from '@turnkit/inline';
import { describe, expect, it } from 'vitest';

/** A model that answers at once and keeps each call's signal; `listen` leaves a listener on it. */
function signalModel(listen: boolean): { model: Model; signals: AbortSignal[] } {
  const signals: AbortSignal[] = [];
  const model: Model = {
    generate: async (_request, { signal }): Promise<ModelResponse> => {
      signals.push(signal);
      if (listen) signal.addEventListener('abort', () => {});
      return { text: 'done', toolCalls: [] };
    },
  };
  return { model, signals };
}

describe('the signal of a turn nobody can cancel', () => {
  it('is reused by the next such turn when nobody listens on it, and never aborts', async () => {
    const first = signalModel(false);
    const second = signalModel(false);
    expect((await runTurn({ model: first.model, input: 'a' })).status).toBe('stopped');
    expect((await runTurn({ model: second.model, input: 'b' })).status).toBe('stopped');
    expect(second.signals[0]).toBe(first.signals[0]);
    expect(second.signals[0]?.aborted).toBe(false);
  });

  it('is not reused when a listener is left on it, nor by a turn with a caller’s signal, which aborts its own at the end', async () => {
    const listening = signalModel(true);
    const next = signalModel(false);
    await runTurn({ model: listening.model, input: 'a' });
    await runTurn({ model: next.model, input: 'b' });
    expect(next.signals[0]).not.toBe(listening.signals[0]);
    const withCaller = signalModel(false);
    await runTurn({ model: withCaller.model, input: 'c', signal: new AbortController().signal });
    expect(withCaller.signals[0]).not.toBe(next.signals[0]);
    expect(withCaller.signals[0]?.aborted).toBe(true);
    const after = signalModel(false);
    await runTurn({ model: after.model, input: 'd' });
    expect(after.signals[0]).toBe(next.signals[0]);
    expect(after.signals[0]?.aborted).toBe(false);
  });
});
