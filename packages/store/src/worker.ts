// The worker: claims runnable turns, runs each with inline's driver, and writes what core asks to
// persist. It adds durability through the driver's handler table only; every turn decision is
// still core's `step`. What it adds:
// - `persist` and the end of a drive write the state, the messages and notices since the last
//   write, and the inbox rows applied, as one compare-and-swap under the lease's token;
// - tools are journaled: `started` before a tool runs, the result the moment it finishes;
// - a batch re-issued after a crash answers journaled calls from the journal and never runs a
//   started call again (it gets an `interrupted` result) unless its tool is `idempotent`;
// - parked turns read decisions and cancels from the inbox.

import { randomUUID } from 'node:crypto';
import {
  createTurn,
  isTerminal,
  parseTurnState,
  resume,
  step,
  type ApprovalDecision,
  type CallRecord,
  type Effect,
  type Message,
  type Model,
  type Notice,
  type ToolCall,
  type ToolResult,
  type TurnError,
  type TurnEvent,
  type TurnLimitsInput,
  type TurnState,
  definedProps,
} from '@turnkit/core';
import {
  createDispatcher,
  LazyCancellation,
  type AfterHook,
  type BeforeHook,
  type Budget,
  type DispatchContext,
  type Dispatcher,
  type Permissions,
  type Policy,
  type ToolDefinition,
} from '@turnkit/dispatch';
import type { CheckFn, OutputSchema } from '@turnkit/inline';
import { defaultHandlers, driveTurn, recordDecisions, type EffectHandlers, type HandlerContext } from '@turnkit/inline/driver';
import { ConflictError, LeaseLostError, type Store } from './store.js';
import type { Claim, Lease } from './types.js';

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

const INTERRUPTED =
  'interrupted: the worker running this call stopped before it reported a result, and the tool is not marked idempotent, so it was not run again.';

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
  const concurrency = count(options.concurrency, 4, 'concurrency', 1);
  const leaseMs = count(options.leaseMs, 30_000, 'leaseMs', 3);
  const pollMs = count(options.pollMs, 500, 'pollMs', 1);
  const id = options.id ?? `worker_${randomUUID()}`;
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
      const claim = await store.claim({ owner: id, leaseMs });
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

/** Runs one claimed turn until it ends, parks or its lease is lost. */
async function runTurnOnce(
  store: Store,
  claim: Claim,
  agents: WorkerOptions['agents'],
  leaseMs: number,
  report: (error: unknown, turnId: string | null) => void,
): Promise<void> {
  const { lease } = claim;
  const agent = Object.hasOwn(agents, claim.agent) ? agents[claim.agent] : undefined;
  if (agent === undefined) {
    const known =
      Object.keys(agents)
        .map((a) => `'${a}'`)
        .join(', ') || '(none)';
    return failTurn(store, lease, {
      kind: 'unknown_agent',
      message: `No agent '${claim.agent}' is registered with the worker that took this turn (it has ${known}). Register the agent with createWorker({ agents }) and submit the turn again.`,
    });
  }

  // Tools: every call is journaled as started before its tool runs.
  const cancellation = new LazyCancellation();
  let lost: Error | null = null;
  const loseLease = (error: Error): void => {
    if (lost === null) lost = error;
    cancellation.abort('this worker lost the turn to another worker');
  };
  const fencedError = (error: unknown): boolean => {
    if (error instanceof LeaseLostError || error instanceof ConflictError) {
      loseLease(error);
      return true;
    }
    return false;
  };
  const idempotent = new Set((agent.tools ?? []).filter((t) => t.idempotent).map((t) => t.name));
  const tools = (agent.tools ?? []).map((tool) => ({
    ...tool,
    async execute(input: unknown, toolCtx: { readonly callId: string; readonly signal: AbortSignal; readonly turnId: string }) {
      try {
        await store.callStarted(lease, { id: toolCtx.callId, name: tool.name });
      } catch (error) {
        fencedError(error);
        throw new Error(
          `the call was not started: its start could not be journaled (${error instanceof Error ? error.message : String(error)})`,
        );
      }
      return tool.execute(input, toolCtx);
    },
  }));

  let dispatcher: Dispatcher;
  let state: TurnState;
  try {
    dispatcher = createDispatcher({
      tools,
      ...definedProps({ policy: agent.policy }),
      ...definedProps({ permissions: agent.permissions }),
      ...definedProps({ hooks: agent.hooks }),
      ...definedProps({ budget: agent.budget }),
      grants: claim.grants,
      ...(claim.budgetUsage === null ? {} : { budgetUsage: claim.budgetUsage }),
    });
  } catch (error) {
    return failTurn(store, lease, {
      kind: 'invalid_agent',
      message: `Agent '${claim.agent}' cannot run this turn: ${error instanceof Error ? error.message : String(error)}`,
    });
  }
  if (claim.state === null) {
    const exempt = dispatcher.loopExemptTools();
    const merged: TurnLimitsInput = { ...agent.limits, ...claim.limits };
    const limits =
      exempt.length === 0 ? merged : { ...merged, loopExemptTools: [...new Set([...(merged.loopExemptTools ?? []), ...exempt])] };
    try {
      state = createTurn({ id: lease.id, limits });
    } catch (error) {
      return failTurn(store, lease, {
        kind: 'invalid_limits',
        message: `The limits of agent '${claim.agent}' and this turn do not combine: ${error instanceof Error ? error.message : String(error)}`,
      });
    }
  } else {
    try {
      state = parseTurnState(claim.state);
    } catch (error) {
      return failTurn(store, lease, {
        kind: 'corrupt_state',
        message: `The stored state of turn '${lease.id}' cannot be read (${error instanceof Error ? error.message : String(error)}); it is kept as it was for inspection.`,
      });
    }
  }

  const transcript: Message[] =
    agent.system === undefined ? [...claim.transcript] : [{ role: 'system', content: agent.system }, ...claim.transcript];
  const unwritten = { messages: [] as Message[], notices: [] as Notice[], applied: [] as string[] };
  const consumed = new Set<string>();
  let cancelRow: string | null = null;

  const write = async (current: TurnState, release: boolean): Promise<void> => {
    if (lost !== null) throw lost;
    const applied = unwritten.applied.splice(0);
    if (cancelRow !== null && isTerminal(current)) applied.push(cancelRow);
    const messages = unwritten.messages.splice(0);
    const notices = unwritten.notices.splice(0);
    try {
      await store.commit(lease, {
        state: current,
        messages,
        notices,
        applied,
        grants: dispatcher.grants(),
        budgetUsage: dispatcher.budgetUsage(),
        release,
      });
    } catch (error) {
      fencedError(error);
      throw error;
    }
  };

  /** Takes a cancel waiting in `rows`: aborts the turn's work and returns the reason (else null). */
  const takeCancel = (rows: readonly { inboxId: string; kind: string; reason: string | null }[]): string | null => {
    const cancel = rows.find((r) => r.kind === 'cancel' && !consumed.has(r.inboxId));
    if (cancel === undefined) return null;
    consumed.add(cancel.inboxId);
    cancelRow = cancel.inboxId;
    const reason = cancel.reason ?? 'cancelled by the caller';
    cancellation.abort(reason);
    return reason;
  };

  const journaled = async (calls: readonly ToolCall[], approved: boolean, ctx: HandlerContext): Promise<TurnEvent> => {
    const { results, started } = await store.journal(
      lease,
      calls.map((c) => c.id),
    );
    const known = new Map(results.map((r) => [r.callId, r]));
    const startedSet = new Set(started);
    const toRun: ToolCall[] = [];
    for (const call of calls) {
      if (known.has(call.id)) continue;
      if (startedSet.has(call.id) && !idempotent.has(call.name)) {
        const result: ToolResult = { callId: call.id, name: call.name, output: INTERRUPTED, isError: true };
        await store.callFinished(lease, result).catch((error: unknown) => {
          fencedError(error);
          throw error;
        });
        known.set(call.id, result);
      } else toRun.push(call);
    }
    const writes: Promise<unknown>[] = [];
    const journal = (result: ToolResult): void => {
      writes.push(store.callFinished(lease, result).catch((error: unknown) => fencedError(error) || report(error, lease.id)));
    };
    // The batch's audit records ride on the event, as in @turnkit/inline (core emits hook_blocked from them).
    const records: CallRecord[] = [];
    const dispatchCtx: DispatchContext = {
      turnId: lease.id,
      get signal() {
        return ctx.signal;
      },
      cancellation,
      onResult: journal,
      onRecord: (record) => records.push(record),
      transcript: ctx.transcript,
      ...definedProps({ context: ctx.context }),
    };
    let held: readonly ToolResult[] = [...known.values()];
    if (approved) {
      const ran = toRun.length === 0 ? [] : await dispatcher.executeApproved(toRun, dispatchCtx);
      await Promise.all(writes);
      if (lost !== null) throw lost;
      return { type: 'approved_tools_completed', results: [...held, ...ran], ...(records.length === 0 ? {} : { records }) };
    }
    const outcome = toRun.length === 0 ? { results: [], parked: [] } : await dispatcher.dispatch(toRun, dispatchCtx);
    await Promise.all(writes);
    if (lost !== null) throw lost;
    held = [...held, ...outcome.results];
    const audit = records.length === 0 ? {} : { records };
    return outcome.parked.length > 0
      ? { type: 'tools_parked', held, parked: outcome.parked, ...audit }
      : { type: 'tools_completed', results: held, ...audit };
  };

  const handlers: EffectHandlers = {
    ...defaultHandlers,
    append(effect, ctx) {
      ctx.transcript.push(effect.message);
      unwritten.messages.push(effect.message);
    },
    emit(effect) {
      unwritten.notices.push(effect.notice);
    },
    persist(_effect, _ctx, current) {
      return write(current, false);
    },
    dispatch_tools: (effect, ctx) => journaled(effect.calls, false, ctx),
    execute_approved: (effect, ctx) => journaled(effect.calls, true, ctx),
    async parked(current) {
      const rows = (await store.pendingInbox(lease)).filter((r) => !consumed.has(r.inboxId));
      if (takeCancel(rows) !== null) return null;
      const decisions: Record<string, ApprovalDecision> = {};
      let any = false;
      for (const row of rows) {
        if (row.kind !== 'decision' || row.callId === null) continue;
        consumed.add(row.inboxId);
        unwritten.applied.push(row.inboxId);
        Object.defineProperty(decisions, row.callId, {
          value: row.decision,
          enumerable: true,
          writable: true,
          configurable: true,
        });
        any = true;
      }
      if (!any) return null;
      recordDecisions(dispatcher, current, decisions);
      return { type: 'approvals_decided', decisions };
    },
  };

  const ctx: HandlerContext = {
    turnId: lease.id,
    model: agent.model,
    dispatcher,
    transcript,
    get signal() {
      return cancellation.signal;
    },
    cancellation,
    ...definedProps({ output: agent.output }),
    ...definedProps({ check: agent.check }),
  };

  // Keep the lease while the turn runs, and hear a cancel that arrives meanwhile.
  const renewal = setInterval(
    () => {
      store
        .renew(lease, leaseMs)
        .then(() => store.pendingInbox(lease))
        .then((rows) => void takeCancel(rows))
        .catch((error: unknown) => {
          if (!fencedError(error)) report(error, lease.id);
        });
    },
    Math.max(1, Math.floor(leaseMs / 3)),
  );

  try {
    // Where the stored state left off. A cancel waiting in the inbox is applied first.
    const waiting = await store.pendingInbox(lease);
    let start: TurnState = state;
    let effects: readonly Effect[];
    const cancelled = isTerminal(state) ? null : takeCancel(waiting);
    if (isTerminal(state)) effects = [];
    else if (cancelled !== null) [start, effects] = step(state, { type: 'cancel', reason: cancelled });
    else if (state.status === 'ready')
      [start, effects] = step(state, claim.input === null ? { type: 'start' } : { type: 'start', input: claim.input });
    else if (state.status === 'dispatching' && state.batch !== null)
      effects = [{ type: 'dispatch_tools', calls: state.batch.calls }];
    else if (state.status === 'executing_approved' && state.batch !== null) {
      const { parked, decisions } = state.batch;
      effects = [
        { type: 'execute_approved', calls: parked.map((p) => p.call).filter((c) => decisions[c.id]?.type === 'approve') },
      ];
    } else if (state.status === 'awaiting_approval') effects = [];
    else [start, effects] = resume(state);

    const { state: end, outcome } = await driveTurn(start, effects, ctx, handlers);
    if (outcome === null && end.status !== 'awaiting_approval') {
      await store.commit(lease, {
        fail: { kind: 'internal_error', message: `The worker found nothing to do for a turn in status '${end.status}'.` },
        release: true,
      });
      return;
    }
    await write(end, true);
  } catch (error) {
    if (lost === null && !(error instanceof LeaseLostError) && !(error instanceof ConflictError)) throw error;
    report(lost ?? error, lease.id);
  } finally {
    clearInterval(renewal);
    cancellation.abort('the turn has left this worker');
  }
}

async function failTurn(store: Store, lease: Lease, error: TurnError): Promise<void> {
  await store.commit(lease, { fail: error, release: true });
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
