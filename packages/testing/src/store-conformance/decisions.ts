// The store conformance suite, part: Decisions, cancels and bad input.

import type { ApprovalDecision } from '@turnkit/core';
import { expect, it } from 'vitest';
import { transcriptLines } from '../transcript.js';
import { asLease, countingTools, transcriptModel, type SuiteContext } from './support.js';
import type { ConformanceStore } from './types.js';

export function decisionsTests<S extends ConformanceStore>(ctx: SuiteContext<S>): void {
  it('decisions: the first decision per call wins and is applied exactly once', async () => {
    const runs = new Map<string, number>();
    const { id, agent } = await ctx.parkedTurn(runs, 'approve');
    expect((await ctx.store.get(id))?.parked.map((p) => p.call.id)).toEqual(['c2']);
    expect(await ctx.store.decide(id, { c2: { type: 'approve' } })).toEqual({ accepted: ['c2'], ignored: [] });
    // A second decision for the call is refused, naming it: the first one stands.
    const late = ctx.store.decide(id, { c2: { type: 'reject', reason: 'too late' } });
    await expect(late).rejects.toMatchObject({ name: 'CallAlreadyDecidedError', turnId: id, callIds: ['c2'] });
    await expect(late).rejects.toThrow(/call 'c2' of turn '.*' has a decision already/);
    const before = await ctx.store.get(id);
    expect(before?.parked).toEqual([]);
    expect(before?.decisions.map((d) => [d.callId, d.status])).toEqual([['c2', 'pending']]);
    await ctx.worker({ approve: agent }).runUntilIdle();
    await ctx.worker({ approve: agent }).runUntilIdle();
    const turn = await ctx.store.get(id);
    expect(turn?.status).toBe('stopped');
    expect(turn?.decisions.map((d) => [d.callId, d.status])).toEqual([['c2', 'applied']]);
    expect(Object.fromEntries(runs)).toEqual({ c1: 1, c2: 1 });
    await expect(ctx.store.decide(id, { c2: { type: 'approve' } })).rejects.toMatchObject({
      name: 'TurnNotWaitingError',
      turnId: id,
      status: 'stopped',
      message: expect.stringMatching(/not waiting for approval \(its status is stopped\)/),
    });
  });

  it('decisions: an unknown turn, an unknown call or a malformed decision is a clear error and changes nothing', async () => {
    const { id, agent } = await ctx.parkedTurn(new Map(), 'baddecide');
    await expect(ctx.store.decide('no_such_turn', { c2: { type: 'approve' } })).rejects.toMatchObject({
      name: 'TurnNotFoundError',
      turnId: 'no_such_turn',
      message: expect.stringMatching(/no turn 'no_such_turn'/),
    });
    // A request with an unknown call stores none of its decisions, the valid one (c2) included.
    await expect(ctx.store.decide(id, { c2: { type: 'approve' }, c9: { type: 'approve' } })).rejects.toMatchObject({
      name: 'UnknownCallError',
      turnId: id,
      callIds: ['c9'],
      waiting: ['c2'],
      message: expect.stringMatching(/no parked call 'c9'; its calls waiting for a decision are 'c2'/),
    });
    await expect(ctx.store.decide(id, { c2: { type: 'yes' } as unknown as ApprovalDecision })).rejects.toThrow(
      /decision for call 'c2'/,
    );
    expect((await ctx.store.get(id))?.decisions).toEqual([]);
    expect(await ctx.store.cancel(id, 'cleanup')).toBe(true);
    await ctx.worker({ baddecide: agent }).runUntilIdle();
    expect((await ctx.store.get(id))?.status).toBe('cancelled');
  });

  it('decisions: all or nothing: a request naming a call decided already stores none of its decisions', async () => {
    const runs = new Map<string, number>();
    const { add, pay } = countingTools(runs);
    const agent = {
      model: transcriptModel([
        { id: 'c1', name: 'add', input: { a: 1, b: 2 } },
        { id: 'c2', name: 'pay', input: { n: 3 } },
        { id: 'c3', name: 'pay', input: { n: 4 } },
      ]),
      tools: [add, pay],
    };
    const id = await ctx.store.submit({ agent: 'allornothing', input: 'add and pay twice' });
    await ctx.worker({ allornothing: agent }).runUntilIdle();
    expect((await ctx.store.get(id))?.parked.map((p) => p.call.id)).toEqual(['c2', 'c3']);
    await ctx.store.decide(id, { c2: { type: 'approve' } });
    await expect(ctx.store.decide(id, { c3: { type: 'approve' }, c2: { type: 'reject' } })).rejects.toMatchObject({
      name: 'CallAlreadyDecidedError',
      turnId: id,
      callIds: ['c2'],
    });
    // An unknown call is named before a decided one, with the calls that still take a decision.
    await expect(ctx.store.decide(id, { c2: { type: 'reject' }, c7: { type: 'approve' } })).rejects.toMatchObject({
      name: 'UnknownCallError',
      callIds: ['c7'],
      waiting: ['c3'],
    });
    const turn = await ctx.store.get(id);
    expect(turn?.parked.map((p) => p.call.id)).toEqual(['c3']);
    expect(turn?.decisions.map((d) => [d.callId, d.status])).toEqual([['c2', 'pending']]);
    // A worker applies c2 and waits for c3; c2 is decided in the state now, and still refused.
    await ctx.worker({ allornothing: agent }).runUntilIdle();
    expect((await ctx.store.get(id))?.status).toBe('awaiting_approval');
    await expect(ctx.store.decide(id, { c2: { type: 'approve' } })).rejects.toMatchObject({ name: 'CallAlreadyDecidedError' });
    expect(await ctx.store.decide(id, { c3: { type: 'reject', reason: 'once is enough' } })).toEqual({
      accepted: ['c3'],
      ignored: [],
    });
    await ctx.worker({ allornothing: agent }).runUntilIdle();
    const done = await ctx.store.get(id);
    expect(done?.status).toBe('stopped');
    expect(done?.decisions.map((d) => [d.callId, d.status])).toEqual([
      ['c2', 'applied'],
      ['c3', 'applied'],
    ]);
    expect(Object.fromEntries(runs)).toEqual({ c1: 1, c2: 1 });
  });

  it('cancel: a parked turn ends cancelled with a result for every call; a second cancel or one after the end changes nothing', async () => {
    const runs = new Map<string, number>();
    const { id, agent } = await ctx.parkedTurn(runs, 'cancel');
    expect(await ctx.store.cancel(id, 'changed my mind')).toBe(true);
    expect(await ctx.store.cancel(id, 'again')).toBe(true);
    await ctx.worker({ cancel: agent }).runUntilIdle();
    const turn = await ctx.store.get(id);
    expect(turn?.status).toBe('cancelled');
    expect(turn?.state?.outcome).toEqual({ status: 'cancelled', reason: 'changed my mind' });
    expect(transcriptLines(turn?.transcript ?? []).slice(2)).toEqual([
      'tool c1 add: ok 3',
      expect.stringMatching(/^tool c2 pay: error .*cancelled/),
    ]);
    expect(turn?.decisions.map((d) => [d.kind, d.status])).toEqual([['cancel', 'applied']]);
    expect(await ctx.store.cancel(id)).toBe(false);
    await expect(ctx.store.cancel('no_such_turn')).rejects.toThrow(/no turn/);
    expect(runs.get('c2')).toBeUndefined();
  });

  it('bad input: an unknown agent and an unreadable state fail the turn with a reason; the worker keeps running', async () => {
    const runs = new Map<string, number>();
    const { add } = countingTools(runs);
    const agents = { known: { model: transcriptModel([{ id: 'c1', name: 'add', input: { a: 1, b: 1 } }]), tools: [add] } };
    const unknown = await ctx.store.submit({ agent: 'nobody', input: 'hi' });
    const corrupt = await ctx.store.submit({ agent: 'known', input: 'hi' });
    const first = await ctx.claimOwn(unknown, 'w1', 60_000); // the oldest first
    const second = await ctx.claimOwn(corrupt, 'w1', 60_000);
    // A corrupted state row: anything that is not a turn state.
    await ctx.store.commit(asLease(second), { state: { status: 'dispatching', nonsense: true } as never, release: true });
    await ctx.store.commit(asLease(first), { release: true });
    // Read back before a worker fails it: the state is unreadable, and `get` says so.
    expect((await ctx.store.get(corrupt))?.error?.kind).toBe('corrupt_state');
    const fine = await ctx.store.submit({ agent: 'known', input: 'hi' });
    await ctx.worker(agents).runUntilIdle();
    expect(await ctx.store.get(unknown)).toMatchObject({
      status: 'failed',
      error: { kind: 'unknown_agent', message: expect.stringMatching(/'nobody'/) },
    });
    const bad = await ctx.store.get(corrupt);
    expect(bad).toMatchObject({ status: 'failed', error: { kind: 'corrupt_state' } });
    expect((await ctx.store.get(fine))?.status).toBe('stopped');
    await expect(ctx.store.submit({ agent: 'known', id: fine })).rejects.toThrow(/exists already/);
    await expect(ctx.store.submit({ agent: '' })).rejects.toThrow(/agent/);
  });

  it('bad input: a parked call whose tool the agent no longer has gets an error result naming it', async () => {
    const { id } = await ctx.parkedTurn(new Map(), 'lost');
    await ctx.store.decide(id, { c2: { type: 'approve' } });
    const { add } = countingTools(new Map());
    await ctx.worker({ lost: { model: transcriptModel([]), tools: [add] } }).runUntilIdle();
    const turn = await ctx.store.get(id);
    expect(turn?.status).toBe('stopped');
    const result = (turn?.transcript ?? []).flatMap((m) => (m.role === 'tool' && m.result.callId === 'c2' ? [m.result] : []))[0];
    expect(result).toMatchObject({ isError: true, output: expect.stringMatching(/pay/) });
  });
}
