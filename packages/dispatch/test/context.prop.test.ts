// A hostile DispatchContext (a Proxy whose traps throw, a revoked Proxy, throwing getters, a
// signal that is not an AbortSignal): the dispatcher reads the context once, never throws or
// rejects, and answers every call exactly once, with an error result saying the context could
// not be read.
import type { ToolCall } from '@turnkit/core';
import type { DecisionRecord, DispatchContext } from '../src/internal.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { call, setup } from './fixtures.js';

const FIELDS = ['turnId', 'signal', 'onResult', 'onRecord', 'context', 'transcript'] as const;

function boom(what: string): never {
  throw new Error(`hostile ${what}`);
}

/** A description of a context, so a failing run prints something readable. */
type Hostile =
  | { readonly kind: 'proxy'; readonly failAfter: number }
  | { readonly kind: 'revoked' }
  | { readonly kind: 'getter'; readonly field: (typeof FIELDS)[number]; readonly failAfter: number }
  | { readonly kind: 'signalProxy' }
  | { readonly kind: 'fakeSignal' }
  | { readonly kind: 'badTurnId' };

const hostile: fc.Arbitrary<Hostile> = fc.oneof(
  fc.record({ kind: fc.constant('proxy' as const), failAfter: fc.nat(4) }),
  fc.constant({ kind: 'revoked' as const }),
  fc.record({ kind: fc.constant('getter' as const), field: fc.constantFrom(...FIELDS), failAfter: fc.nat(2) }),
  fc.constant({ kind: 'signalProxy' as const }),
  fc.constant({ kind: 'fakeSignal' as const }),
  fc.constant({ kind: 'badTurnId' as const }),
);

/** Builds the context; `failAfter` reads succeed before the reads start to throw (a context read twice fails). */
function make(h: Hostile): DispatchContext {
  switch (h.kind) {
    case 'proxy': {
      let reads = 0;
      const trap = (): never => boom('trap');
      return new Proxy({ turnId: 't' } as DispatchContext, {
        get: (target, key) => (reads++ < h.failAfter ? Reflect.get(target, key) : boom(`get ${String(key)}`)),
        has: trap,
        ownKeys: trap,
        getOwnPropertyDescriptor: trap,
        getPrototypeOf: trap,
      });
    }
    case 'revoked': {
      const { proxy, revoke } = Proxy.revocable({ turnId: 't' } as DispatchContext, {});
      revoke();
      return proxy;
    }
    case 'getter': {
      let reads = 0;
      const ctx: Record<string, unknown> = { turnId: 't' };
      Object.defineProperty(ctx, h.field, {
        get: () => (reads++ < h.failAfter ? undefined : boom(`getter ${h.field}`)),
        enumerable: true,
      });
      return ctx as unknown as DispatchContext;
    }
    case 'signalProxy':
      return { turnId: 't', signal: new Proxy(new AbortController().signal, {}) };
    case 'fakeSignal':
      return { turnId: 't', signal: { aborted: false } as AbortSignal };
    case 'badTurnId':
      return { turnId: { toString: () => boom('toString') } as unknown as string };
  }
}

describe('a hostile dispatch context', () => {
  it('never makes dispatch, executeApproved, classify or execute throw or reject; every call gets one result', async () => {
    const numRuns = 300;
    let unreadable = 0;
    await fc.assert(
      fc.asyncProperty(
        hostile,
        fc.array(fc.constantFrom('add', 'echo', 'shell', 'nope'), { minLength: 1, maxLength: 6 }),
        async (h, names) => {
          const calls: ToolCall[] = names.map((name) =>
            call(name, name === 'echo' ? { text: 'hi' } : name === 'add' ? { a: 1, b: 2 } : { cmd: 'ls' }),
          );
          const { dispatcher, records } = setup({ permissions: { ask: ['shell'] } });
          const ids = calls.map((c) => c.id);

          const { results, parked } = await dispatcher.dispatch(calls, make(h));
          const answered = [...results.map((r) => r.callId), ...parked.map((p) => p.call.id)];
          expect(answered.sort()).toEqual([...ids].sort());
          expect(records.map((r: DecisionRecord) => r.callId)).toEqual(ids);
          const bad = results.filter(
            (r) => typeof r.output === 'string' && r.output.includes('the dispatch context could not be read'),
          );
          if (bad.length > 0) {
            unreadable++;
            // A context that cannot be read fails every call of the batch alike, and runs none.
            expect(bad.map((r) => r.callId)).toEqual(ids);
            expect(bad.every((r) => r.isError)).toBe(true);
            expect(records.every((r) => r.decision === 'deny' && r.source === 'invalid_context')).toBe(true);
            expect(dispatcher.budgetUsage().total).toBe(0);
          }

          const approved = await dispatcher.executeApproved(calls, make(h));
          expect(approved.map((r) => r.callId)).toEqual(ids);

          const verdict = await dispatcher.classify(calls[0] as ToolCall, make(h));
          expect(['execute', 'deny', 'needs_approval']).toContain(verdict.kind);
          const executed = await dispatcher.execute(
            { kind: 'execute', call: calls[0] as ToolCall, input: (calls[0] as ToolCall).input },
            make(h),
          );
          expect(executed.callId).toBe(ids[0]);
        },
      ),
      { numRuns },
    );
    expect(unreadable).toBeGreaterThan(numRuns / 4);
  });

  it('names what failed in the result', async () => {
    const { dispatcher, records } = setup();
    const c = call('add', { a: 1, b: 2 });
    const { results } = await dispatcher.dispatch([c], make({ kind: 'getter', field: 'onResult', failAfter: 0 }));
    expect(results).toEqual([
      {
        callId: c.id,
        name: 'add',
        output:
          "Call to 'add' not run: the dispatch context could not be read (hostile getter onResult). The program calling the dispatcher must pass a plain { turnId, signal?, context?, transcript? } object.",
        isError: true,
        errorKind: 'internal',
      },
    ]);
    expect(records).toMatchObject([{ callId: c.id, decision: 'deny', source: 'invalid_context' }]);
  });

  it('reads the context once: a cancellation read only at the start still cancels the call', async () => {
    const controller = new AbortController();
    let reads = 0;
    const ctx = {
      turnId: 't',
      get signal() {
        if (++reads > 1) boom('second read');
        return controller.signal;
      },
    };
    const { dispatcher } = setup();
    controller.abort();
    const { results } = await dispatcher.dispatch([call('add', { a: 1, b: 2 }), call('echo', { text: 'x' })], ctx);
    expect(results.map((r) => r.output)).toEqual([
      "cancelled: the turn was cancelled before 'add' ran.",
      "cancelled: the turn was cancelled before 'echo' ran.",
    ]);
    expect(reads).toBe(1);
  });
});
