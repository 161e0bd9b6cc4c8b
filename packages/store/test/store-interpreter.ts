// The store as a conformance interpreter: a scenario's run becomes a stored turn. Its options
// become an agent (model, system prompt, limits, output schema, and the tools with the
// permissions, hooks and policy the scenario's dispatcher was made with), its input a submitted
// turn, and workers run the turn until it ends or parks. Approvals go through `store.decide` and a
// worker picks the turn up again; the scenario's abort signal becomes `store.cancel`. The result
// is read back with `store.get`, as any caller of the store would read it.
//
// With `handBackAfter: k` the first worker hands the turn back right after its k-th effect (the
// fence's `lose`, as a worker does when its drain deadline passes) and a fresh worker goes on from
// what was stored, so every effect boundary is a place where the turn changes hands.

import type { Model, ModelCallOptions, ModelRequest, ModelResponse } from '@turnkit/core';
import { type AgentDefinition, createWorker, type Store } from '@turnkit/store';
import type { ConformanceResult } from '@turnkit/testing';
import type { ConformanceResume, ConformanceResumeOptions, ConformanceRun } from '@turnkit/testing/internal';
import { Fence, HandedBack } from '../src/worker/fence.js';
import { runActivation } from '../src/worker/activation.js';
import { type AgentOptions, agentForRun, assertRanOnce, callerOf, decideStored, resultOf, settleStored } from './stored-run.js';

const AGENT = 'conformance';

/**
 * How long a worker's lease lasts. A running turn hears a cancel when it renews its lease (every
 * third of it), so a short lease keeps the cancel scenarios quick; it is still long enough that a
 * busy machine renews it in time.
 */
const LEASE_MS = 450;

export interface StoreInterpreterOptions {
  /** Hand the turn back after this many effects (counted over the run and its resume), once. */
  readonly handBackAfter?: number;
}

export interface StoreInterpreter {
  readonly run: ConformanceRun;
  readonly resume: ConformanceResume;
  /** Whether a worker handed the turn back (false when the turn had no more effects than `handBackAfter`). */
  handedBack(): boolean;
  /** Effects the workers performed, over the run and its resume. */
  effects(): number;
}

let turns = 0;

/**
 * The store's workers as a conformance adapter runs them: with `handBackAfter: k`, the first
 * worker hands the turn back right after the tree's k-th effect and a fresh worker goes on from
 * what was stored. Agents report their effects through `onEffect` (their `observe` hook) and take
 * their models through `modelFor`; `drain` runs a turn until no worker can take it.
 */
export function handingBack(store: Store, handBackAfter: number | undefined) {
  let effects = 0;
  let handedBack = false;
  /** The fence of the activation the hand-back is meant for (the first worker's), while it runs. */
  let handing: Fence | null = null;
  const faults: unknown[] = [];
  const report = (error: unknown): void => void faults.push(error);
  /** One replaying model per scenario model, so a resume answers as the run did. */
  const models = new WeakMap<Model, Model>();
  return {
    onEffect(): void {
      effects += 1;
      if (handing !== null && effects === (handBackAfter ?? 0) + 1) {
        handedBack = true;
        handing.lose(new HandedBack(handing.lease.id));
      }
    },
    /** The model an agent runs on: the scenario's, replaying its answers when the turn changes hands. */
    modelFor(model: Model): Model {
      if (handBackAfter === undefined) return model;
      let made = models.get(model);
      if (made === undefined) models.set(model, (made = replaying(model)));
      return made;
    },
    /** Runs the turn until no worker can take it (it ended, or it is parked with nothing decided). */
    async drain(id: string, agents: Record<string, AgentDefinition>): Promise<void> {
      // Before the hand-back, each activation runs as the worker loop runs it (runActivation with a
      // fence per claim), with the fence at hand so the effect count can trip it.
      while (handBackAfter !== undefined && !handedBack) {
        const claim = await store.claim({ owner: `first-worker-${id}`, leaseMs: LEASE_MS, turnIds: [id] });
        if (claim === null) return;
        const fence = new Fence(store, claim.lease, report);
        handing = fence;
        try {
          await runActivation(store, claim, agents, LEASE_MS, report, fence);
        } finally {
          handing = null;
        }
      }
      // "Another process": a worker that never saw the turn.
      await createWorker({ store, agents, turnIds: [id], leaseMs: LEASE_MS, onError: report }).runUntilIdle();
    },
    /** Fails when a worker reported a fault. */
    assertNoFaults(): void {
      if (faults.length > 0) throw new Error(`a worker reported faults: ${faults.map(String).join('; ')}`);
    },
    handedBack: () => handedBack,
    effects: () => effects,
  };
}

export function storeInterpreter(store: Store, options: StoreInterpreterOptions = {}): StoreInterpreter {
  const workers = handingBack(store, options.handBackAfter);
  /** Tool runs by call id, over the run and its resume: no call may run twice (no corpus tool is idempotent). */
  const runs = new Map<string, number>();

  function agentFor(run: AgentOptions): AgentDefinition {
    const agent = agentForRun(run, runs, 'store');
    return { ...agent, model: workers.modelFor(run.model), observe: () => ({ hooks: { onEffect: workers.onEffect } }) };
  }

  /** Drives a submitted (or decided) turn to its end, or until it waits for decisions nobody gives. */
  async function settle(id: string, run: AgentOptions): Promise<ConformanceResult> {
    const agents = { [AGENT]: agentFor(run) };
    const turn = await settleStored(id, { client: store, drive: () => workers.drain(id, agents), ...callerOf(run) });
    workers.assertNoFaults();
    assertRanOnce(runs);
    return resultOf(turn, run.system);
  }

  return {
    async run(options) {
      // The store takes an input and nothing before it: an earlier transcript cannot be submitted.
      if (options.transcript !== undefined && options.transcript.length > 0)
        throw new Error('a stored turn cannot start from an earlier transcript');
      turns += 1;
      const id = `conformance-${turns}`;
      await store.submit({ agent: AGENT, id, input: options.input });
      const { input: _input, tools: _tools, id: _id, ...rest } = options;
      return settle(id, rest);
    },
    async resume(options: ConformanceResumeOptions) {
      const { id, rest } = await decideStored(store, options);
      return settle(id, rest);
    },
    handedBack: workers.handedBack,
    effects: workers.effects,
  };
}

/**
 * The scripted model, answering a request it has answered before with the same reply. A model
 * call is not journaled: a turn handed back before the checkpoint that holds the reply calls the
 * model again with the same request, and a real model would answer it again. The script, which
 * counts calls, would instead move on to its next step. A call whose signal is already aborted
 * (the worker let go of the turn just before it) never reaches the script.
 */
export function replaying(model: Model): Model {
  const answers = new Map<string, Promise<ModelResponse>>();
  return {
    generate(request: ModelRequest, callOptions: ModelCallOptions): Promise<ModelResponse> {
      if (callOptions.signal.aborted) {
        const error = new Error('The model call was aborted.');
        error.name = 'AbortError';
        return Promise.reject(error);
      }
      const key = JSON.stringify([request.messages, request.toolChoice, request.modelOverride ?? null, request.iteration]);
      let answer = answers.get(key);
      if (answer === undefined) {
        answer = Promise.resolve().then(() => model.generate(request, callOptions));
        answers.set(key, answer);
      }
      return answer;
    },
  };
}
