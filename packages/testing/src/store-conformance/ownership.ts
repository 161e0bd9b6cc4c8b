// The store conformance suite, part: Ownership: compare-and-swap conflicts, fenced writes after a takeover, lease expiry, and the journal keeping the first result per call.

import { expect, it } from 'vitest';
import { asLease, countingTools, transcriptModel, type SuiteContext } from './support.js';
import type { ConformanceStore } from './types.js';

export function ownershipTests<S extends ConformanceStore>(ctx: SuiteContext<S>): void {
  it('ownership: a write with a stale version fails with a compare-and-swap conflict', async () => {
    const id = await ctx.store.submit({ agent: 'cas' });
    const lease = await ctx.claimOwn(id, 'w1', 60_000);
    const stale = { ...lease };
    await ctx.store.commit(asLease(lease), {});
    await expect(ctx.store.commit(asLease(stale), {})).rejects.toMatchObject({ name: 'ConflictError' });
    await ctx.end(lease);
  });

  it('ownership: a live lease is not taken; an expired one is taken over with a new token, and the old holder is fenced out', async () => {
    const id = await ctx.store.submit({ agent: 'fence' });
    const live = await ctx.claimOwn(id, 'w1', 60_000);
    expect(await ctx.store.claim({ owner: 'w2', leaseMs: 60_000 })).toBeNull();
    await ctx.end(live);

    const other = await ctx.store.submit({ agent: 'fence' });
    const first = await ctx.claimOwn(other, 'w1', 0); // expires at once, as if its worker died
    const second = await ctx.claimOwn(other, 'w2', 60_000);
    expect(second.token).toBeGreaterThan(first.token);
    await expect(ctx.store.commit(asLease(first), {})).rejects.toMatchObject({ name: 'LeaseLostError' });
    await expect(ctx.store.renew(asLease(first), 1000)).rejects.toMatchObject({ name: 'LeaseLostError' });
    await expect(ctx.store.callStarted(asLease(first), { id: 'x1', name: 'add' })).rejects.toMatchObject({
      name: 'LeaseLostError',
    });
    await expect(
      ctx.store.callFinished(asLease(first), { callId: 'x1', name: 'add', output: 1, isError: false }),
    ).rejects.toMatchObject({ name: 'LeaseLostError' });
    expect((await ctx.store.journal(asLease(second), ['x1'])).results).toEqual([]);
    await ctx.store.renew(asLease(second), 60_000);
    await ctx.end(second);
    expect((await ctx.store.get(other))?.status).toBe('failed');
  });

  it('ownership: a worker takes over a turn whose lease expired and finishes it', async () => {
    const runs = new Map<string, number>();
    const { add } = countingTools(runs);
    const id = await ctx.store.submit({ agent: 'takeover', input: 'go' });
    await ctx.claimOwn(id, 'dead-worker', 0);
    await ctx
      .worker({
        takeover: { model: transcriptModel([{ id: 'c1', name: 'add', input: { a: 2, b: 2 } }]), tools: [add] },
      })
      .runUntilIdle();
    const turn = await ctx.store.get(id);
    expect(turn?.status).toBe('stopped');
    expect(runs.get('c1')).toBe(1);
  });

  it('tool results are idempotent: the first result per call wins', async () => {
    const id = await ctx.store.submit({ agent: 'journal' });
    const lease = await ctx.claimOwn(id, 'w1', 60_000);
    await ctx.store.callStarted(asLease(lease), { id: 'c1', name: 'add' });
    await ctx.store.callStarted(asLease(lease), { id: 'c2', name: 'add' });
    expect(await ctx.store.callFinished(asLease(lease), { callId: 'c1', name: 'add', output: 1, isError: false })).toBe(true);
    expect(await ctx.store.callFinished(asLease(lease), { callId: 'c1', name: 'add', output: 2, isError: false })).toBe(false);
    const journal = await ctx.store.journal(asLease(lease), ['c1', 'c2', 'c3']);
    expect(journal.results).toEqual([{ callId: 'c1', name: 'add', output: 1, isError: false }]);
    expect(journal.started).toEqual(['c2']);
    await ctx.end(lease);
  });
}
