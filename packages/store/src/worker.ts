// The worker: claims runnable turns and runs each with inline's driver (run-turn.ts), writing what
// core asks to persist. It adds durability through the driver's handler table only; every turn
// decision is still core's `step`. See turn-run.ts (checkpoints, decisions, cancels, the lease)
// and batch.ts (the tool journal).

import { randomUUID } from 'node:crypto';
import { createTurn, definedProps, type Model, type TurnLimitsInput } from '@turnkit/core';
import type { AfterHook, BeforeHook, Budget, Permissions, Policy, ToolDefinition } from '@turnkit/dispatch';
import type { CheckFn, OutputSchema } from '@turnkit/inline';
import { armedCrash } from './crash.js';
import { runTurnOnce } from './run-turn.js';
import type { Store } from './store.js';
import type { Claim } from './types.js';

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
  readonly output?: OutputSchema;
  readonly check?: CheckFn;
}

export interface WorkerOptions {
  readonly store: Store;
  readonly agents: { readonly [name: string]: AgentDefinition };
  /** Turns run at once. Default 4. */
  readonly concurrency?: number;
  /** How long a claim lasts without renewal; renewed every third of it while the turn runs. Default 30000. */
  readonly leaseMs?: number;
  /** How often `start()` looks for work when idle. Default 500. */
  readonly pollMs?: number;
  /** Run only these turns (a script that runs the turns it submitted); default: any runnable turn. */
  readonly turnIds?: readonly string[];
  /** This worker's name in lease rows. Default `worker_<uuid>`. */
  readonly id?: string;
  /** Hears faults the worker survives (a lost lease, a database error); the turn is left for another try. */
  readonly onError?: (error: unknown, turnId: string | null) => void;
}

export interface Worker {
  readonly id: string;
  /** Claims and runs turns in the background until `stop()`. */
  start(): void;
  /** Stops claiming and waits for the turns it holds to finish or park. */
  stop(): Promise<void>;
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
  const pollMs = count(options.pollMs, 500, 'pollMs', 1);
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

  const running = new Set<Promise<void>>();
  let loop: Promise<void> | null = null;
  let stopping = false;
  let wake: (() => void) | null = null;

  async function fill(): Promise<boolean> {
    let claimed = false;
    while (running.size < concurrency && !stopping) {
      const claim = await store.claim({ owner: id, leaseMs, ...definedProps({ turnIds }) });
      if (claim === null) break;
      claimed = true;
      const run: Promise<void> = runClaim(claim).finally(() => {
        running.delete(run);
        wake?.();
      });
      running.add(run);
    }
    return claimed;
  }

  async function runClaim(claim: Claim): Promise<void> {
    try {
      await runTurnOnce(store, claim, agents, leaseMs, report);
    } catch (error) {
      report(error, claim.lease.id);
    }
  }

  return {
    id,
    start() {
      if (loop !== null) return;
      stopping = false;
      loop = (async () => {
        while (!stopping) {
          try {
            await fill();
          } catch (error) {
            report(error, null);
          }
          if (stopping) break;
          await new Promise<void>((resolve) => {
            const timer = setTimeout(done, pollMs);
            function done(): void {
              clearTimeout(timer);
              wake = null;
              resolve();
            }
            wake = done;
          });
        }
      })();
    },
    async stop() {
      stopping = true;
      wake?.();
      await loop;
      loop = null;
      await Promise.all([...running]);
    },
    async runUntilIdle() {
      for (;;) {
        const claimed = await fill();
        if (running.size === 0 && !claimed) return;
        if (running.size > 0) await Promise.race([...running]);
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

function count(value: unknown, fallback: number, what: string, min: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min)
    throw new RangeError(`createWorker option \`${what}\` must be a whole number >= ${min}, got ${String(value)}.`);
  return value;
}
