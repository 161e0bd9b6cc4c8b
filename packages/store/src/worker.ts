// The worker: claims runnable turns and runs each with inline's driver (run-turn.ts), writing what
// core asks to persist. It adds durability through the driver's handler table only; every turn
// decision is still core's `step`, and every durable decision (claims, fenced writes, the journal,
// the inbox, departures) is the protocol's `protocolStep` (protocol/protocol.ts). See turn-run.ts
// (checkpoints, decisions, cancels, the lease) and batch.ts (the tool journal).

import { randomUUID } from 'node:crypto';
import { createTurn, type Model, type TurnLimitsInput } from '@turnkit/core';
import { definedProps } from '@turnkit/core/internal';
import type { AfterHook, BeforeHook, Budget, Permissions, Policy, ToolDefinition } from '@turnkit/dispatch';
import type { CheckFn, OutputSchema } from '@turnkit/inline';
import { armedCrash } from './crash.js';
import type { ActivationObserver, StoredActivation } from './observe.js';
import type { Store } from './store.js';
import type { WorkerObserver, WorkerStats } from './worker-events.js';
import { WorkerLoop } from './worker-loop.js';

/** An agent: the code a turn names. Registered with a worker, never stored. */
export interface AgentDefinition {
  readonly model: Model;
  // any: each tool has its own input type.
  readonly tools?: readonly ToolDefinition<any>[];
  readonly system?: string;
  /** Turn limits; a turn's own `limits` (from submit) win. */
  readonly limits?: TurnLimitsInput;
  readonly policy?: Policy;
  readonly permissions?: Permissions;
  readonly hooks?: { readonly before?: readonly BeforeHook[]; readonly after?: readonly AfterHook[] };
  readonly budget?: Budget;
  /**
   * How long a person has to decide a parked call (ms) of a tool without its own
   * `approvalTimeoutMs`; then the stored turn rejects it as expired (the time is kept in the
   * database). Default: a parked call waits until it is decided.
   */
  readonly approvalTimeoutMs?: number;
  readonly output?: OutputSchema;
  readonly check?: CheckFn;
  /**
   * At most this many turns of this agent run at once across every worker of the database (a
   * model's rate limit is shared by every machine). Every worker should register the same cap.
   */
  readonly maxRunning?: number;
  /**
   * Called each time a worker starts running a turn of this agent (an activation), for observers of
   * that run: `onEffect`, `onStep`, `wrapExecution`, and a trace context saved with the turn for
   * the next activation. @turnkit/otel's `traceTurn` returns one:
   * `observe: (a) => traceTurn({ agent: a.agent, link: a.traceContext, transcript: a.transcript })`.
   */
  readonly observe?: (activation: StoredActivation) => ActivationObserver;
}

export interface WorkerOptions {
  readonly store: Store;
  readonly agents: { readonly [name: string]: AgentDefinition };
  /** Turns run at once. Default 4. */
  readonly concurrency?: number;
  /** How long a claim lasts without renewal; renewed every third of it while the turn runs. Default 30000. */
  readonly leaseMs?: number;
  /**
   * The longest `start()` sleeps when idle. Wake-ups come sooner: a turn submitted, decided,
   * cancelled or handed back (LISTEN/NOTIFY on Postgres, in-process on PGlite), a turn leaving
   * this worker, a retry falling due. Default 2000.
   */
  readonly pollMs?: number;
  /** Run only these turns (a script that runs the turns it submitted); default: any runnable turn. */
  readonly turnIds?: readonly string[];
  /** This worker's name in lease rows. Default `worker_<uuid>`. */
  readonly id?: string;
  /** Hears faults the worker survives (a lost lease, a database error); the turn is left for another try. */
  readonly onError?: (error: unknown, turnId: string | null) => void;
  /** Hears what the worker does: turns claimed and leaving, the database lost and back, draining (see describeWorkerEvent). */
  readonly observer?: WorkerObserver;
}

export interface Worker {
  readonly id: string;
  /** Claims and runs turns in the background until `stop()`. */
  start(): void;
  /**
   * Stops claiming and waits for the turns it holds to finish or park. With `deadlineMs`, what
   * still runs when it passes is handed back: its work stops, nothing more of it is written, and
   * its lease ends so another worker takes it at once (a tool cut short is `interrupted`).
   */
  stop(options?: { readonly deadlineMs?: number }): Promise<void>;
  /** What the worker holds and has done since it started. */
  stats(): WorkerStats;
  /** Claims and runs turns until none is runnable and none is running (for tests and scripts). */
  runUntilIdle(): Promise<void>;
}

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
