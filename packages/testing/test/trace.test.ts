import { describe, expect, it } from 'vitest';
import { createTurn, step, type TurnEvent } from '@turnkit/core';
import { fail, recordTrace, replay, scriptedModel, testTurn, text } from '@turnkit/testing';
import type { Trace } from '@turnkit/core';

function recorded(): Trace {
  const initial = createTurn({ id: 't' });
  const recorder = recordTrace(initial);
  let state = initial;
  const events: TurnEvent[] = [
    { type: 'start', input: 'hi' },
    { type: 'model_responded', response: { text: 'hello', toolCalls: [] } },
    { type: 'output_accepted', output: 'hello' },
  ];
  for (const event of events) {
    const [next, effects] = step(state, event);
    recorder.onStep({ event, state: next, effects });
    state = next;
  }
  return recorder.trace();
}

describe('replay', () => {
  it('replays a recorded trace without a difference', () => {
    expect(replay(recorded())).toEqual({ ok: true, steps: 3 });
  });

  it('replays a trace recorded when the model call was the `call_model` effect', () => {
    const trace = recorded();
    const legacy = JSON.parse(JSON.stringify(trace).replaceAll('"call_llm"', '"call_model"')) as Trace;
    expect(JSON.stringify(legacy)).toContain('"call_model"');
    expect(replay(legacy)).toEqual({ ok: true, steps: 3 });
    const changed = JSON.parse(JSON.stringify(trace).replaceAll('"call_llm"', '"call_other"')) as Trace;
    expect(replay(changed).ok).toBe(false);
  });

  it('reproduces model retries: a recorded trace with two retries replays identically', async () => {
    const limited = Object.assign(new Error('Too many requests.'), { retryable: true });
    const t = testTurn({ input: 'hi', model: scriptedModel([fail(limited), fail(limited), text('hello')]) });
    await t.runUntil();
    const trace = JSON.parse(JSON.stringify(t.trace())) as Trace;
    const retries = trace.entries
      .flatMap((e) => e.effects)
      .flatMap((e) => (e.type === 'call_llm' && e.request.attempt !== undefined ? [e.request] : []));
    expect(retries).toEqual([
      { iteration: 1, final: false, attempt: 1, delayMs: 500 },
      { iteration: 1, final: false, attempt: 2, delayMs: 1000 },
    ]);
    expect(trace.entries.map((e) => e.event.type)).toEqual([
      'start',
      'model_failed',
      'model_failed',
      'model_responded',
      'output_accepted',
    ]);
    expect(replay(trace)).toEqual({ ok: true, steps: 5 });
    // A retry the recording does not account for (here: the second failure edited to not retryable) is caught there.
    const edited: Trace = {
      ...trace,
      entries: trace.entries.map((e, i) =>
        i === 2 ? { ...e, event: { type: 'model_failed', error: { kind: 'model_error', message: 'x', retryable: false } } } : e,
      ),
    };
    const report = replay(edited);
    expect(report.ok).toBe(false);
    if (!report.ok)
      expect(report.difference).toMatchObject({
        index: 2,
        part: 'state',
        path: 'status',
        recorded: 'calling_model',
        replayed: 'failed',
      });
    if (!report.ok) expect(report.difference.event.type).toBe('model_failed');
  });

  it('survives a JSON round trip', () => {
    expect(replay(JSON.parse(JSON.stringify(recorded()))).ok).toBe(true);
  });

  it('reports the first difference in state with its path', () => {
    const trace = recorded();
    const tampered: Trace = {
      ...trace,
      entries: trace.entries.map((e, i) => (i === 1 ? { ...e, state: { ...e.state, candidate: 'other' } } : e)),
    };
    const report = replay(tampered);
    expect(report.ok).toBe(false);
    if (report.ok) return;
    expect(report.difference).toMatchObject({ index: 1, part: 'state', path: 'candidate', recorded: 'other', replayed: 'hello' });
    expect(report.difference.message).toBe(
      'Replay differs at entry 1 (event \'model_responded\') in state at candidate: recorded "other", replayed "hello".',
    );
  });

  it('reports a difference in effects, including a missing one', () => {
    const trace = recorded();
    const tampered: Trace = {
      ...trace,
      entries: trace.entries.map((e, i) => (i === 0 ? { ...e, effects: e.effects.slice(1) } : e)),
    };
    const report = replay(tampered);
    expect(!report.ok && report.difference.part).toBe('effects');
    expect(!report.ok && report.difference.path).toBe('[0].type');
  });
});
