// The store conformance suite: the contract of a durable turn store (and the worker that runs its
// turns) as vitest tests any backend must pass. Imported from `@turnkit/testing/store-conformance`
// only, so `@turnkit/testing` itself never loads vitest. The store and the worker factory are
// passed in (this package does not depend on @turnkit/store); store-conformance/types.ts is the
// slice of their API the suite uses. The tests are in store-conformance/, one file per part.

import { definedProps } from '@turnkit/core/internal';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { decisionsTests } from './store-conformance/decisions.js';
import { lifecycleTests } from './store-conformance/lifecycle.js';
import { ownershipTests } from './store-conformance/ownership.js';
import { recoveryTests } from './store-conformance/recovery.js';
import { approvalAgent, asLease, FAIL, type SuiteContext } from './store-conformance/support.js';
import type { ConformanceLease, ConformanceStore, StoreConformanceOptions } from './store-conformance/types.js';

// The store a backend hands the suite; the options and the worker's slice are reachable through
// `storeConformance`'s parameters.
export type { ConformanceStore } from './store-conformance/types.js';

/** The helpers every part of the suite uses, over the store `beforeAll` opens. */
function suiteContext<S extends ConformanceStore>(
  options: StoreConformanceOptions<S>,
  errors: unknown[],
): SuiteContext<S> & { store: S } {
  const ctx: SuiteContext<S> & { store: S } = {
    store: undefined as unknown as S, // set by beforeAll
    options,
    worker: (agents, leaseMs) =>
      options.createWorker({ store: ctx.store, agents, ...definedProps({ leaseMs }), onError: (error) => errors.push(error) }),
    async claimOwn(id, owner, leaseMs) {
      const claim = await ctx.store.claim({ owner, leaseMs });
      expect(claim?.lease.id).toBe(id);
      return (claim as { lease: ConformanceLease }).lease;
    },
    end: (lease) => ctx.store.commit(asLease(lease), { fail: FAIL, release: true }),
    async parkedTurn(runs, agentName) {
      const agent = approvalAgent(runs);
      const id = await ctx.store.submit({ agent: agentName, input: 'add and pay' });
      await ctx.worker({ [agentName]: agent }).runUntilIdle();
      expect((await ctx.store.get(id))?.status).toBe('awaiting_approval');
      return { id, agent };
    },
  };
  return ctx;
}

/**
 * Registers a vitest `describe` block with the store contract: submit/get/list/watch, ownership
 * (compare-and-swap conflict, fenced write after takeover, lease expiry and takeover), tool-result
 * idempotency, no transaction across a model or tool call, decisions (first wins, applied once),
 * cancels, bad input, and recovery from every checkpoint a worker writes.
 *
 * @example
 * import { createWorker, openStore } from '@turnkit/store';
 * import { storeConformance } from '@turnkit/testing/store-conformance';
 * storeConformance(() => openStore('memory://'), { name: 'pglite', createWorker });
 */
export function storeConformance<S extends ConformanceStore>(
  openStore: () => Promise<S>,
  options: StoreConformanceOptions<S>,
): void {
  const title = options.skip
    ? `store conformance: ${options.name} (skipped: ${options.skip})`
    : `store conformance: ${options.name}`;
  describe.skipIf(Boolean(options.skip))(title, () => {
    const ctx = suiteContext(options, []);
    beforeAll(async () => {
      ctx.store = await openStore();
    });
    afterAll(async () => {
      await ctx.store?.close();
      await options.cleanup?.();
    });
    lifecycleTests(ctx);
    ownershipTests(ctx);
    recoveryTests(ctx);
    decisionsTests(ctx);
  });
}
