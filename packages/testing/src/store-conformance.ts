// The store conformance suite: the contract of a durable turn store (and the worker that runs its
// turns) as vitest tests any backend must pass. Imported from `@turnkit/testing/store-conformance`
// only, so `@turnkit/testing` itself never loads vitest. The store and the worker factory are
// passed in (this package does not depend on @turnkit/store); the types below are the slice of
// their API the suite uses.

import type {
  ApprovalDecision,
  Message,
  Model,
  ModelRequest,
  ModelResponse,
  ParkedCall,
  ToolResult,
  TurnError,
  TurnState,
} from '@turnkit/core';
import { defineTool, type ToolDefinition } from '@turnkit/dispatch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { transcriptLines } from './transcript.js';
import { definedProps } from '@turnkit/core';

/** A lease as the suite sees it. */
export interface ConformanceLease {
  readonly id: string;
  readonly token: number;
  version: number;
}

/** The slice of `Store` (from @turnkit/store) the suite uses. */
export interface ConformanceStore {
  submit(options: { readonly agent: string; readonly input?: string; readonly id?: string }): Promise<string>;
  get(id: string): Promise<{
    readonly status: string;
    readonly state: TurnState | null;
    readonly transcript: readonly Message[];
    readonly parked: readonly ParkedCall[];
    readonly decisions: readonly { readonly callId: string | null; readonly status: string; readonly kind: string }[];
    readonly toolCalls: readonly {
      readonly callId: string;
      readonly result: ToolResult | null;
      readonly startedAt: string | null;
    }[];
    readonly error: TurnError | null;
  } | null>;
  list(options?: {
    readonly status?: never;
    readonly limit?: number;
    readonly cursor?: string | null;
  }): Promise<{ readonly turns: readonly { readonly id: string }[]; readonly cursor: string | null }>;
  decide(
    id: string,
    decisions: Record<string, ApprovalDecision>,
  ): Promise<{ readonly accepted: readonly string[]; readonly ignored: readonly string[] }>;
  cancel(id: string, reason?: string): Promise<boolean>;
  watch(id: string, options?: { readonly pollMs?: number }): AsyncIterable<{ readonly type: string; readonly seq: number }>;
  close(): Promise<void>;
  claim(options: { readonly owner: string; readonly leaseMs: number }): Promise<{ readonly lease: ConformanceLease } | null>;
  renew(lease: never, leaseMs: number): Promise<void>;
  commit(lease: never, commit: { readonly state?: never; readonly fail?: TurnError; readonly release?: boolean }): Promise<void>;
  journal(
    lease: never,
    callIds: readonly string[],
  ): Promise<{ readonly results: readonly ToolResult[]; readonly started: readonly string[] }>;
  callStarted(lease: never, call: { readonly id: string; readonly name: string }): Promise<void>;
  callFinished(lease: never, result: ToolResult): Promise<boolean>;
}

export interface ConformanceAgent {
  readonly model: Model;
  // any: each tool has its own input type.
  readonly tools?: readonly ToolDefinition<any>[];
  readonly system?: string;
}

export interface ConformanceWorker {
  runUntilIdle(): Promise<void>;
}

export interface StoreConformanceOptions<S extends ConformanceStore> {
  /** Shown in the describe block's name. */
  readonly name: string;
  /** `createWorker` from @turnkit/store (or a compatible worker). */
  readonly createWorker: (options: {
    readonly store: S;
    readonly agents: Record<string, ConformanceAgent>;
    readonly leaseMs?: number;
    readonly onError?: (error: unknown) => void;
  }) => ConformanceWorker;
  /** Skip the whole suite, saying why (the reason is in the describe block's name). */
  readonly skip?: string | false;
  /** Called once after the suite, with the store closed (drop a scratch schema, say). */
  readonly cleanup?: () => Promise<void>;
}

// The lease API takes the backend's own lease type; the suite hands back what `claim` gave it.
type AnyLease = never;
const asLease = (lease: ConformanceLease): AnyLease => lease as unknown as AnyLease;
const FAIL: TurnError = { kind: 'test_cleanup', message: 'ended by the conformance suite' };

/**
 * A model that answers from the transcript, not from a counter, so a recovered turn gets the same
 * replies: the first call asks for `add` and `pay`, any call after tool results answers 'done'.
 */
export function transcriptModel(
  calls: readonly { readonly id: string; readonly name: string; readonly input: Record<string, unknown> }[],
): Model & { readonly calls: number } {
  let count = 0;
  return {
    get calls() {
      return count;
    },
    async generate(request: ModelRequest): Promise<ModelResponse> {
      count += 1;
      const last = request.messages[request.messages.length - 1];
      if (last?.role === 'tool') return { text: 'done', toolCalls: [] };
      return {
        text: '',
        toolCalls: calls.map((c) => ({ id: c.id, name: c.name, input: c.input as ModelResponse['toolCalls'][number]['input'] })),
      };
    },
  };
}

/** Tools that count their runs by call id (the side effect the suite checks runs at most once). */
function countingTools(runs: Map<string, number>): { add: ToolDefinition<any>; pay: ToolDefinition<any> } {
  const ran = (id: string): void => void runs.set(id, (runs.get(id) ?? 0) + 1);
  return {
    add: defineTool({
      name: 'add',
      description: 'Adds.',
      input: z.object({ a: z.number(), b: z.number() }),
      execute: ({ a, b }, ctx) => (ran(ctx.callId), a + b),
    }),
    pay: defineTool({
      name: 'pay',
      description: 'Pays.',
      input: z.object({ n: z.number() }),
      needsApproval: true,
      execute: ({ n }, ctx) => (ran(ctx.callId), `paid ${n}`),
    }),
  };
}

let unique = 0;
const fresh = (what: string): string => `${what}_${process.pid}_${Date.now().toString(36)}_${(unique += 1)}`;

/**
 * Registers a vitest `describe` block with the store contract: submit/get/list/watch, ownership
 * (compare-and-swap conflict, fenced write after takeover, lease expiry and takeover), tool-result
 * idempotency, decisions (first wins, applied once), cancels, bad input, and recovery from every
 * checkpoint a worker writes.
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
    let store: S;
    const errors: unknown[] = [];
    const worker = (agents: Record<string, ConformanceAgent>, leaseMs?: number): ConformanceWorker =>
      options.createWorker({
        store,
        agents,
        ...definedProps({ leaseMs }),
        onError: (error) => errors.push(error),
      });
    /** Claims the one runnable turn and checks it is `id` (each test leaves no runnable turn behind). */
    const claimOwn = async (id: string, owner: string, leaseMs: number): Promise<ConformanceLease> => {
      const claim = await store.claim({ owner, leaseMs });
      expect(claim?.lease.id).toBe(id);
      return (claim as { lease: ConformanceLease }).lease;
    };
    const end = (lease: ConformanceLease): Promise<void> => store.commit(asLease(lease), { fail: FAIL, release: true });
    const parkedTurn = async (runs: Map<string, number>, agentName: string): Promise<{ id: string; agent: ConformanceAgent }> => {
      const { add, pay } = countingTools(runs);
      const agent = {
        model: transcriptModel([
          { id: 'c1', name: 'add', input: { a: 1, b: 2 } },
          { id: 'c2', name: 'pay', input: { n: 3 } },
        ]),
        tools: [add, pay],
      };
      const id = await store.submit({ agent: agentName, input: 'add and pay' });
      await worker({ [agentName]: agent }).runUntilIdle();
      expect((await store.get(id))?.status).toBe('awaiting_approval');
      return { id, agent };
    };

    beforeAll(async () => {
      store = await openStore();
    });
    afterAll(async () => {
      await store?.close();
      await options.cleanup?.();
    });

    it('runs a submitted turn to the end: transcript, journal, list and watch', async () => {
      const runs = new Map<string, number>();
      const { add } = countingTools(runs);
      const id = await store.submit({ agent: 'calc', input: 'What is 1 + 2?' });
      expect((await store.get(id))?.status).toBe('ready');
      await worker({
        calc: { model: transcriptModel([{ id: 'c1', name: 'add', input: { a: 1, b: 2 } }]), tools: [add], system: 'You add.' },
      }).runUntilIdle();
      const turn = await store.get(id);
      expect(turn?.status).toBe('stopped');
      expect(transcriptLines(turn?.transcript ?? [])).toEqual([
        'user: What is 1 + 2?',
        'assistant: [c1 add]',
        'tool c1 add: ok 3',
        'assistant: done',
      ]);
      expect(turn?.toolCalls.map((c) => [c.callId, c.result?.output, c.startedAt !== null])).toEqual([['c1', 3, true]]);
      expect(runs.get('c1')).toBe(1);
      const seen: string[] = [];
      for await (const event of store.watch(id, { pollMs: 5 })) seen.push(event.type);
      expect(seen.filter((t) => t === 'message')).toHaveLength(4);
      expect(seen[seen.length - 1]).toBe('status');
      const ids: string[] = [];
      let cursor: string | null = null;
      do {
        const page: Awaited<ReturnType<S['list']>> = (await store.list({ limit: 2, cursor })) as Awaited<ReturnType<S['list']>>;
        ids.push(...page.turns.map((t) => t.id));
        cursor = page.cursor;
      } while (cursor !== null);
      expect(ids).toContain(id);
      expect(await store.get('no_such_turn')).toBeNull();
    });

    it('ownership: a write with a stale version fails with a compare-and-swap conflict', async () => {
      const id = await store.submit({ agent: 'cas' });
      const lease = await claimOwn(id, 'w1', 60_000);
      const stale = { ...lease };
      await store.commit(asLease(lease), {});
      await expect(store.commit(asLease(stale), {})).rejects.toMatchObject({ name: 'ConflictError' });
      await end(lease);
    });

    it('ownership: a live lease is not taken; an expired one is taken over with a new token, and the old holder is fenced out', async () => {
      const id = await store.submit({ agent: 'fence' });
      const live = await claimOwn(id, 'w1', 60_000);
      expect(await store.claim({ owner: 'w2', leaseMs: 60_000 })).toBeNull();
      await end(live);

      const other = await store.submit({ agent: 'fence' });
      const first = await claimOwn(other, 'w1', 0); // expires at once, as if its worker died
      const second = await claimOwn(other, 'w2', 60_000);
      expect(second.token).toBeGreaterThan(first.token);
      await expect(store.commit(asLease(first), {})).rejects.toMatchObject({ name: 'LeaseLostError' });
      await expect(store.renew(asLease(first), 1000)).rejects.toMatchObject({ name: 'LeaseLostError' });
      await expect(store.callStarted(asLease(first), { id: 'x1', name: 'add' })).rejects.toMatchObject({
        name: 'LeaseLostError',
      });
      await expect(
        store.callFinished(asLease(first), { callId: 'x1', name: 'add', output: 1, isError: false }),
      ).rejects.toMatchObject({ name: 'LeaseLostError' });
      expect((await store.journal(asLease(second), ['x1'])).results).toEqual([]);
      await store.renew(asLease(second), 60_000);
      await end(second);
      expect((await store.get(other))?.status).toBe('failed');
    });

    it('ownership: a worker takes over a turn whose lease expired and finishes it', async () => {
      const runs = new Map<string, number>();
      const { add } = countingTools(runs);
      const id = await store.submit({ agent: 'takeover', input: 'go' });
      await claimOwn(id, 'dead-worker', 0);
      await worker({
        takeover: { model: transcriptModel([{ id: 'c1', name: 'add', input: { a: 2, b: 2 } }]), tools: [add] },
      }).runUntilIdle();
      const turn = await store.get(id);
      expect(turn?.status).toBe('stopped');
      expect(runs.get('c1')).toBe(1);
    });

    it('no transaction is held across a model call or a tool call: both can lock the turn row meanwhile', async () => {
      // `decide` locks the turn's row (FOR UPDATE) before it finds the turn is not parked: it would
      // wait forever for a worker that held a transaction (or, on PGlite, any statement would).
      let id = '';
      const probes: string[] = [];
      const probe = async (who: string): Promise<void> => {
        try {
          await store.decide(id, { c1: { type: 'approve' } });
          probes.push(`${who}: decided`);
        } catch (error) {
          probes.push(`${who}: ${error instanceof Error ? error.message : String(error)}`);
        }
      };
      const inner = transcriptModel([{ id: 'c1', name: 'probe', input: {} }]);
      const model: Model = {
        generate: async (request, callOptions) => (await probe('model'), inner.generate(request, callOptions)),
      };
      const tool = defineTool({
        name: 'probe',
        description: 'Uses the store while it runs.',
        input: z.object({}),
        execute: async () => (await probe('tool'), 'probed'),
      });
      id = await store.submit({ agent: 'notx', input: 'probe' });
      await worker({ notx: { model, tools: [tool] } }).runUntilIdle();
      expect((await store.get(id))?.status).toBe('stopped');
      expect(probes).toEqual([
        expect.stringMatching(/^model: .*not waiting for approval/),
        expect.stringMatching(/^tool: .*not waiting for approval/),
        expect.stringMatching(/^model: .*not waiting for approval/),
      ]);
    });

    it('tool results are idempotent: the first result per call wins', async () => {
      const id = await store.submit({ agent: 'journal' });
      const lease = await claimOwn(id, 'w1', 60_000);
      await store.callStarted(asLease(lease), { id: 'c1', name: 'add' });
      await store.callStarted(asLease(lease), { id: 'c2', name: 'add' });
      expect(await store.callFinished(asLease(lease), { callId: 'c1', name: 'add', output: 1, isError: false })).toBe(true);
      expect(await store.callFinished(asLease(lease), { callId: 'c1', name: 'add', output: 2, isError: false })).toBe(false);
      const journal = await store.journal(asLease(lease), ['c1', 'c2', 'c3']);
      expect(journal.results).toEqual([{ callId: 'c1', name: 'add', output: 1, isError: false }]);
      expect(journal.started).toEqual(['c2']);
      await end(lease);
    });

    it('recovery answers a journaled call from the journal, never re-runs a started call, and re-runs an idempotent one', async () => {
      const runs = new Map<string, number>();
      const ran = (id: string): void => void runs.set(id, (runs.get(id) ?? 0) + 1);
      const once = defineTool({
        name: 'once',
        description: 'Runs once.',
        input: z.object({}),
        execute: (_i, ctx) => (ran(ctx.callId), 'ran'),
      });
      const again = defineTool({
        name: 'again',
        description: 'Safe to repeat.',
        input: z.object({}),
        idempotent: true,
        execute: (_i, ctx) => (ran(ctx.callId), 'ran'),
      });
      const agent = {
        model: transcriptModel([
          { id: 'done1', name: 'once', input: {} },
          { id: 'mid1', name: 'once', input: {} },
          { id: 'mid2', name: 'again', input: {} },
          { id: 'new1', name: 'once', input: {} },
        ]),
        tools: [once, again],
      };
      const id = await store.submit({ agent: 'recover', input: 'go' });
      // A worker that dies right after writing `dispatching`, before any tool starts.
      const dying = crashing(store, 1);
      void options
        .createWorker({ store: dying.store, agents: { recover: agent }, leaseMs: 200, onError: () => undefined })
        .runUntilIdle();
      await dying.crashed;
      // What its tools had done when it died: done1 finished, mid1 and mid2 started, new1 not started.
      const lease = asLease(dying.lease());
      await store.callStarted(lease, { id: 'done1', name: 'once' });
      await store.callFinished(lease, { callId: 'done1', name: 'once', output: 'ran before the crash', isError: false });
      await store.callStarted(lease, { id: 'mid1', name: 'once' });
      await store.callStarted(lease, { id: 'mid2', name: 'again' });
      await settle(store, id, worker({ recover: agent }));
      const turn = await store.get(id);
      expect(turn?.status).toBe('stopped');
      expect(Object.fromEntries(runs)).toEqual({ mid2: 1, new1: 1 });
      const results = (turn?.transcript ?? []).flatMap((m) => (m.role === 'tool' ? [m.result] : []));
      expect(results.map((r) => r.callId)).toEqual(['done1', 'mid1', 'mid2', 'new1']);
      expect(results[0]?.output).toBe('ran before the crash');
      expect(results[1]).toMatchObject({ isError: true, output: expect.stringMatching(/^interrupted/) });
      expect(turn?.toolCalls.every((c) => c.result !== null)).toBe(true);
    });

    // Each write of an approval turn: 0 = before any write, then dispatching, parked, suspended,
    // dispatching (approved), boundary. A worker dies right after write k; another finishes.
    for (const k of [0, 1, 2, 3, 4, 5]) {
      it(`resumes from checkpoint ${k}: same transcript, every tool ran once`, async () => {
        const runs = new Map<string, number>();
        const { add, pay } = countingTools(runs);
        const agent = {
          model: transcriptModel([
            { id: 'c1', name: 'add', input: { a: 1, b: 2 } },
            { id: 'c2', name: 'pay', input: { n: 3 } },
          ]),
          tools: [add, pay],
        };
        const id = await store.submit({ agent: `resume${k}`, input: 'add and pay' });
        const dying = crashing(store, k);
        // The first worker dies at write k. (On a slow machine its lease can lapse and it may take
        // the turn over from itself; the turn may then end with fewer writes and no crash: the
        // checks below hold either way.)
        const first = options.createWorker({
          store: dying.store,
          agents: { [`resume${k}`]: agent },
          leaseMs: 200,
          onError: () => undefined,
        });
        await Promise.race([first.runUntilIdle(), dying.crashed]);
        if (k >= 3 && (await store.get(id))?.status === 'awaiting_approval') {
          // It lives on past the approval: it parked the turn, now it applies the decision.
          await store.decide(id, { c2: { type: 'approve' } });
          await Promise.race([first.runUntilIdle(), dying.crashed]);
        }
        await settle(store, id, worker({ [`resume${k}`]: agent }), { c2: { type: 'approve' } });
        const turn = await store.get(id);
        expect(turn?.status).toBe('stopped');
        expect(transcriptLines(turn?.transcript ?? [])).toEqual([
          'user: add and pay',
          'assistant: [c1 add, c2 pay]',
          'tool c1 add: ok 3',
          'tool c2 pay: ok "paid 3"',
          'assistant: done',
        ]);
        expect(Object.fromEntries(runs)).toEqual({ c1: 1, c2: 1 });
        expect(turn?.decisions.map((d) => [d.callId, d.status])).toEqual([['c2', 'applied']]);
      });
    }

    it('decisions: the first decision per call wins and is applied exactly once', async () => {
      const runs = new Map<string, number>();
      const { id, agent } = await parkedTurn(runs, 'approve');
      expect((await store.get(id))?.parked.map((p) => p.call.id)).toEqual(['c2']);
      expect(await store.decide(id, { c2: { type: 'approve' } })).toEqual({ accepted: ['c2'], ignored: [] });
      expect(await store.decide(id, { c2: { type: 'reject', reason: 'too late' } })).toEqual({ accepted: [], ignored: ['c2'] });
      const before = await store.get(id);
      expect(before?.parked).toEqual([]);
      expect(before?.decisions.map((d) => [d.callId, d.status])).toEqual([['c2', 'pending']]);
      await worker({ approve: agent }).runUntilIdle();
      await worker({ approve: agent }).runUntilIdle();
      const turn = await store.get(id);
      expect(turn?.status).toBe('stopped');
      expect(turn?.decisions.map((d) => [d.callId, d.status])).toEqual([['c2', 'applied']]);
      expect(Object.fromEntries(runs)).toEqual({ c1: 1, c2: 1 });
      await expect(store.decide(id, { c2: { type: 'approve' } })).rejects.toThrow(/not waiting for approval/);
    });

    it('decisions: an unknown turn, an unknown call or a malformed decision is a clear error and changes nothing', async () => {
      const { id, agent } = await parkedTurn(new Map(), 'baddecide');
      await expect(store.decide('no_such_turn', { c2: { type: 'approve' } })).rejects.toThrow(/no turn 'no_such_turn'/);
      await expect(store.decide(id, { c2: { type: 'approve' }, c9: { type: 'approve' } })).rejects.toThrow(/no parked call 'c9'/);
      await expect(store.decide(id, { c2: { type: 'yes' } as unknown as ApprovalDecision })).rejects.toThrow(
        /decision for call 'c2'/,
      );
      expect((await store.get(id))?.decisions).toEqual([]);
      expect(await store.cancel(id, 'cleanup')).toBe(true);
      await worker({ baddecide: agent }).runUntilIdle();
      expect((await store.get(id))?.status).toBe('cancelled');
    });

    it('cancel: a parked turn ends cancelled with a result for every call; a second cancel or one after the end changes nothing', async () => {
      const runs = new Map<string, number>();
      const { id, agent } = await parkedTurn(runs, 'cancel');
      expect(await store.cancel(id, 'changed my mind')).toBe(true);
      expect(await store.cancel(id, 'again')).toBe(true);
      await worker({ cancel: agent }).runUntilIdle();
      const turn = await store.get(id);
      expect(turn?.status).toBe('cancelled');
      expect(turn?.state?.outcome).toEqual({ status: 'cancelled', reason: 'changed my mind' });
      expect(transcriptLines(turn?.transcript ?? []).slice(2)).toEqual([
        'tool c1 add: ok 3',
        expect.stringMatching(/^tool c2 pay: error .*cancelled/),
      ]);
      expect(turn?.decisions.map((d) => [d.kind, d.status])).toEqual([['cancel', 'applied']]);
      expect(await store.cancel(id)).toBe(false);
      await expect(store.cancel('no_such_turn')).rejects.toThrow(/no turn/);
      expect(runs.get('c2')).toBeUndefined();
    });

    it('bad input: an unknown agent and an unreadable state fail the turn with a reason; the worker keeps running', async () => {
      const runs = new Map<string, number>();
      const { add } = countingTools(runs);
      const agents = { known: { model: transcriptModel([{ id: 'c1', name: 'add', input: { a: 1, b: 1 } }]), tools: [add] } };
      const unknown = await store.submit({ agent: 'nobody', input: 'hi' });
      const corrupt = await store.submit({ agent: 'known', input: 'hi' });
      const first = await claimOwn(unknown, 'w1', 60_000); // the oldest first
      const second = await claimOwn(corrupt, 'w1', 60_000);
      // A corrupted state row: anything that is not a turn state.
      await store.commit(asLease(second), { state: { status: 'dispatching', nonsense: true } as never, release: true });
      await store.commit(asLease(first), { release: true });
      const fine = await store.submit({ agent: 'known', input: 'hi' });
      await worker(agents).runUntilIdle();
      expect(await store.get(unknown)).toMatchObject({
        status: 'failed',
        error: { kind: 'unknown_agent', message: expect.stringMatching(/'nobody'/) },
      });
      const bad = await store.get(corrupt);
      expect(bad).toMatchObject({ status: 'failed', error: { kind: 'corrupt_state' } });
      expect((await store.get(fine))?.status).toBe('stopped');
      await expect(store.submit({ agent: 'known', id: fine })).rejects.toThrow(/exists already/);
      await expect(store.submit({ agent: '' })).rejects.toThrow(/agent/);
    });

    it('bad input: a parked call whose tool the agent no longer has gets an error result naming it', async () => {
      const { id } = await parkedTurn(new Map(), 'lost');
      await store.decide(id, { c2: { type: 'approve' } });
      const { add } = countingTools(new Map());
      await worker({ lost: { model: transcriptModel([]), tools: [add] } }).runUntilIdle();
      const turn = await store.get(id);
      expect(turn?.status).toBe('stopped');
      const result = (turn?.transcript ?? []).flatMap((m) =>
        m.role === 'tool' && m.result.callId === 'c2' ? [m.result] : [],
      )[0];
      expect(result).toMatchObject({ isError: true, output: expect.stringMatching(/pay/) });
    });
  });
}

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A store whose worker "dies" right after its k-th commit (k = 0: right after its first claim):
 * from then on every call of that worker hangs, as if the process were gone. Its lease then
 * expires, and another worker takes the turn over.
 */
function crashing<S extends ConformanceStore>(
  store: S,
  k: number,
): { store: S; crashed: Promise<void>; lease: () => ConformanceLease } {
  let commits = 0;
  let dead = false;
  let last: ConformanceLease | null = null;
  let die!: () => void;
  const crashed = new Promise<void>((resolve) => (die = resolve));
  const hang = new Promise<never>(() => undefined);
  const proxy = new Proxy(store, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver) as unknown;
      if (typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        if (dead) return hang;
        const result = (await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args)) as unknown;
        // A worker claims one turn (`claim`) or several in one statement (`claimMany`).
        const claimed = key === 'claim' ? result : key === 'claimMany' ? ((result as unknown[])[0] ?? null) : null;
        if (claimed !== null) last = (claimed as { lease: ConformanceLease }).lease;
        if ((claimed !== null && k === 0) || (key === 'commit' && (commits += 1) === k)) {
          dead = true;
          die();
        }
        return result;
      };
    },
  });
  return { store: proxy, crashed, lease: () => last as ConformanceLease };
}

/** Runs `worker` until the turn ends (a dead worker's lease has to expire first), deciding parked calls with `decisions`. */
async function settle(
  store: ConformanceStore,
  id: string,
  worker: ConformanceWorker,
  decisions?: Record<string, ApprovalDecision>,
): Promise<void> {
  for (let i = 0; i < 1000; i += 1) {
    await worker.runUntilIdle();
    const turn = await store.get(id);
    if (turn === null || ['stopped', 'failed', 'cancelled'].includes(turn.status)) return;
    if (decisions !== undefined && turn.parked.length > 0) await store.decide(id, decisions);
    else await pause(10);
  }
  const turn = await store.get(id);
  throw new Error(
    `Turn '${id}' did not end: it is ${turn?.status}, with ${turn?.parked.length} parked calls and decisions ${JSON.stringify(turn?.decisions)}.`,
  );
}
