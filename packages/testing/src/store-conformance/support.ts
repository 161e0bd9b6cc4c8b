// What the store conformance tests share: the models and tools they run, a worker that "dies" at a
// given write, and a loop that runs a turn to its end.

import type { ApprovalDecision, ModelRequest, ModelResponse, Model, TurnError } from '@turnkit/core';
import { defineTool, type ToolDefinition } from '@turnkit/dispatch';
import { z } from 'zod';
import type {
  ConformanceAgent,
  ConformanceLease,
  ConformanceStore,
  ConformanceWorker,
  StoreConformanceOptions,
} from './types.js';

/** What each group of tests is given: the open store (after beforeAll) and helpers bound to it. */
export interface SuiteContext<S extends ConformanceStore> {
  readonly store: S;
  readonly options: StoreConformanceOptions<S>;
  /** A worker over the store with these agents (its faults are collected, not thrown). */
  worker(agents: Record<string, ConformanceAgent>, leaseMs?: number): ConformanceWorker;
  /** Claims the one runnable turn and checks it is `id` (each test leaves no runnable turn behind). */
  claimOwn(id: string, owner: string, leaseMs: number): Promise<ConformanceLease>;
  /** Ends a claimed turn (failed, released). */
  end(lease: ConformanceLease): Promise<void>;
  /** A turn run until it parks on `pay` (c2) after `add` (c1) ran. */
  parkedTurn(runs: Map<string, number>, agentName: string): Promise<{ id: string; agent: ConformanceAgent }>;
}

// The lease API takes the backend's own lease type; the suite hands back what `claim` gave it.
export type AnyLease = never;
export const asLease = (lease: ConformanceLease): AnyLease => lease as unknown as AnyLease;
export const FAIL: TurnError = { kind: 'test_cleanup', message: 'ended by the conformance suite' };

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
export function countingTools(runs: Map<string, number>): { add: ToolDefinition<any>; pay: ToolDefinition<any> } {
  const ran = (id: string): void => void runs.set(id, (runs.get(id) ?? 0) + 1);
  return {
    add: defineTool({
      name: 'add',
      description: 'Adds.',
      input: z.object({ a: z.number(), b: z.number() }),
      readOnly: true,
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

/** The approval turn most tests run: the model asks for `add` (c1, runs at once) and `pay` (c2, needs approval), then answers. */
export function approvalAgent(runs: Map<string, number>): ConformanceAgent {
  const { add, pay } = countingTools(runs);
  return {
    model: transcriptModel([
      { id: 'c1', name: 'add', input: { a: 1, b: 2 } },
      { id: 'c2', name: 'pay', input: { n: 3 } },
    ]),
    tools: [add, pay],
  };
}

export const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A store whose worker "dies" right after its k-th commit lands (k = 0: right after its first
 * claim): that commit never returns and from then on every call of that worker hangs, as if the
 * process were gone. Its lease then
 * expires, and another worker takes the turn over.
 */
export function crashing<S extends ConformanceStore>(
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
        if (claimed !== null && k === 0) {
          dead = true;
          die();
        }
        // The k-th commit landed and its worker never hears back: it dies before its next step
        // (a commit that carries a call's start never lets that call's tool run).
        if (key === 'commit' && (commits += 1) === k) {
          dead = true;
          die();
          return hang;
        }
        return result;
      };
    },
  });
  return { store: proxy, crashed, lease: () => last as ConformanceLease };
}

/** Runs `worker` until the turn ends (a dead worker's lease has to expire first), deciding parked calls with `decisions`. */
export async function settle(
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
