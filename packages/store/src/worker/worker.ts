// The worker: claims runnable turns and runs each with inline's driver (activation.ts), writing what
// core asks to persist. It adds durability through the driver's handler table only; every turn
// decision is still core's `step`, and every durable decision (claims, fenced writes, the journal,
// the inbox, departures) is the protocol's `protocolStep` (protocol.ts). See held-turn.ts
// (checkpoints, decisions, cancels, the lease) and tool-journal.ts (the tool journal).

import { randomUUID } from 'node:crypto';
import { createTurn } from '@turnkit/core';
import { armedCrash } from '../crash.js';
import { WorkerLoop } from './loop.js';
import type { AgentDefinition, Worker, WorkerOptions } from './types.js';

/**
 * Creates a worker that runs the store's turns with the agents given here.
 *
 * @example
 * const worker = createWorker({ store, agents: { calculator: { model, tools: [add] } } });
 * await worker.runUntilIdle();
 */
export function createWorker(options: WorkerOptions): Worker {
  if (options === null || typeof options !== 'object') throw new TypeError('createWorker needs { store, agents }.');
  const { store, agents } = options;
  if (store === null || typeof store !== 'object' || typeof store.claim !== 'function')
    throw new TypeError('createWorker option `store` must be a store from openStore().');
  if (agents === null || typeof agents !== 'object')
    throw new TypeError('createWorker option `agents` must be an object { [name]: { model, tools, … } }.');
  for (const [name, agent] of Object.entries(agents)) checkAgent(name, agent);
  armedCrash(); // a bad TURNKIT_STORE_CRASH_AT is an error now, not at a crash point
  const concurrency = count(options.concurrency, 4, 'concurrency', 1);
  const leaseMs = count(options.leaseMs, 30_000, 'leaseMs', 3);
  const pollMs = count(options.pollMs, 2000, 'pollMs', 1);
  const id = options.id ?? `worker_${randomUUID()}`;
  const turnIds = options.turnIds;
  if (turnIds !== undefined && (!Array.isArray(turnIds) || !turnIds.every((t) => typeof t === 'string')))
    throw new TypeError('createWorker option `turnIds` must be an array of turn ids.');
  const report = (error: unknown, turnId: string | null): void => {
    try {
      options.onError?.(error, turnId);
    } catch {
      // A reporter must not break the worker.
    }
  };

  const caps = Object.fromEntries(
    Object.entries(agents).flatMap(([name, agent]) => (agent.maxRunning === undefined ? [] : [[name, agent.maxRunning]])),
  );
  const loop = new WorkerLoop({
    store,
    agents,
    id,
    concurrency,
    leaseMs,
    pollMs,
    caps,
    report,
    observer: options.observer,
    turnIds,
  });

  return {
    id,
    start: () => loop.start(),
    stats: () => loop.stats(),
    async stop(stopOptions = {}) {
      const deadlineMs = stopOptions.deadlineMs ?? null;
      if (deadlineMs !== null) count(deadlineMs, 0, 'deadlineMs', 0, 'worker.stop option');
      await loop.stop(deadlineMs);
    },
    async runUntilIdle() {
      for (;;) {
        const { claimed } = await loop.fill();
        const running = loop.running();
        if (running.length > 0) await Promise.race(running);
        else if (claimed === 0) {
          // Nothing runs and nothing was claimable: done, unless a retry waits in the database (a turn
          // waiting for a person is idle, whenever its approval expires).
          const due = await store.nextDue('retries');
          if (due === null) return;
          await new Promise((resolve) => setTimeout(resolve, Math.max(1, due)));
        }
      }
    },
  };
}

function checkAgent(name: string, agent: AgentDefinition): void {
  if (agent === null || typeof agent !== 'object')
    throw new TypeError(`createWorker: agent '${name}' must be an object { model, tools?, system?, … }.`);
  if (agent.model === null || typeof agent.model !== 'object' || typeof agent.model.generate !== 'function') {
    throw new TypeError(`createWorker: agent '${name}' needs a \`model\` with a generate(request, { signal }) method.`);
  }
  if (agent.tools !== undefined && !Array.isArray(agent.tools))
    throw new TypeError(`createWorker: agent '${name}' option \`tools\` must be an array of tools made with defineTool.`);
  if (agent.system !== undefined && typeof agent.system !== 'string')
    throw new TypeError(`createWorker: agent '${name}' option \`system\` must be a string.`);
  if (agent.maxRunning !== undefined) count(agent.maxRunning, 1, 'maxRunning', 1, `createWorker: agent '${name}' option`);
  if (agent.limits !== undefined) {
    try {
      createTurn({ id: 'check', limits: agent.limits });
    } catch (error) {
      throw new TypeError(
        `createWorker: agent '${name}' has bad limits: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }
}

function count(value: unknown, fallback: number, what: string, min: number, where = 'createWorker option'): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min)
    throw new RangeError(`${where} \`${what}\` must be a whole number >= ${min}, got ${String(value)}.`);
  return value;
}
