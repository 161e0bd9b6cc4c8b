// A turn as a DBOS workflow: the workflow's id is the turn's id. Core's `step` decides (through
// inline's driver, as in every interpreter); the workflow performs the effects, each one that
// touches the world as a DBOS step: a model call, each tool call (journaled as started before its
// tool runs), the tool batch around them (what core is told), a check of the output. Approvals
// and cancels arrive as DBOS messages (`DBOS.recv`, one topic per parked call); a retry's wait and
// an approval's deadline are DBOS's durable timers (a `recv` with a timeout, which a cancel ends).
// A turn of a thread waits until the turns before it have ended, then starts from the thread's
// context and grants.
//
// A turn of many agents (docs/agents.md) is one workflow, as it is one row in the store: core keeps
// the child turn inside its parent's state, and the driver performs the child's effects in the
// child's context (its agent's model, tools and transcript), through the same handlers, so a
// child's model calls and tool calls are DBOS steps too. A child's calls are journaled and decided
// under the store's keys (the `transfer_task` call path and the call's id), and its messages and
// notices are log entries of kind `child` (the store's `ChildLogEntry`), which neither the turn's
// transcript nor its thread's context reads. Which turn of the tree acts is core's answer
// (`activeTurn`). A replay runs the whole tree again from the start, so a child's transcript and
// dispatcher come back as they were, from the steps' records.
//
// DBOS recovers a workflow by running it again from the start: each step already done returns what
// it returned then, and `step` is pure, so the turn comes back to where it was with nothing redone.
// Hence nothing here reads the clock, the database or the process except inside a step or a DBOS
// call that records its answer (`DBOS.now`, `DBOS.recv`), or where a replay reads the same (a
// thread's context: the log of turns that have ended). Writes for `get` and `watch` are plain
// writes that a replay repeats without changing anything (writeCommit).

import {
  approvalDeadline,
  createTurn,
  decisionsTaken,
  isTerminal,
  resume,
  undecided,
  type ApprovalDecision,
  type CallRecord,
  type Message,
  type Notice,
  type ToolCall,
  type ToolResult,
  type TurnError,
  type TurnEvent,
  type TurnLimitsInput,
  type TurnState,
} from '@turnkit/core';
import { activeTurn, definedProps, layerLimits } from '@turnkit/core/internal';
import { createDispatcher, type Dispatcher, type Grant, type ToolDefinition } from '@turnkit/dispatch';
import type { BudgetUsage, DispatchContext } from '@turnkit/dispatch/internal';
import { defaultHandlers, driveTurn, type EffectHandlers, handlerFailed, type HandlerContext } from '@turnkit/inline/driver';
import type { AgentDefinition } from '@turnkit/store';
import type { ChildLogEntry } from '@turnkit/store/internal';
import {
  activeKeys,
  contextOf,
  directory,
  dispatcherRules,
  INTERRUPTED,
  isMultiAgent,
  messageOf,
  openHold,
  protocolStep,
  reachable,
  runStoredCompaction,
  runtimeTools,
  storedStatusOf,
  uniqueGrants,
} from '@turnkit/store/internal';
import { randomUUID } from 'node:crypto';
import { DBOS, Error as DBOSErrors } from '@dbos-inc/dbos-sdk';
import type pg from 'pg';

/** The topic of a cancel's message, and of the message that wakes a parked turn (or one waiting behind its thread). */
export const CANCEL_TOPIC = 'turnkit.cancel';
export const WAKE_TOPIC = 'turnkit.wake';
/** The topic of a parked call's decision. */
export const decisionTopic = (callId: string): string => `turnkit.decision:${callId}`;

/** The longest a parked turn with no deadline waits before it looks again (seconds). */
const IDLE_WAIT_S = 24 * 60 * 60;

/** What the workflow of this process works with (set by createDbosTurns). */
export interface Runtime {
  readonly pool: pg.Pool;
  readonly schema: string;
  readonly agents: { readonly [name: string]: AgentDefinition };
  /** How often a running model call or tool batch looks for a cancel (ms). */
  readonly cancelPollMs: number;
}

let runtime: Runtime | null = null;

export function setRuntime(next: Runtime | null): void {
  runtime = next;
}

function current(): Runtime {
  if (runtime === null)
    throw new Error('A turnkit DBOS workflow ran in a process without createDbosTurns({ agents }); start one with the agents.');
  return runtime;
}

/** One entry of the turn's log, in the order the turn made it. */
type LogEntry =
  | { readonly kind: 'message'; readonly data: Message }
  | { readonly kind: 'notice'; readonly data: Notice }
  /** What a compaction kept (without the system prompt): a turn of the thread after it starts from there. */
  | { readonly kind: 'compaction'; readonly data: readonly Message[] }
  /** A child turn's message, notice or compaction (a turn of many agents). */
  | { readonly kind: 'child'; readonly data: ChildLogEntry }
  | { readonly kind: 'status'; readonly data: { readonly status: string; readonly outcome: unknown } };

interface Commit {
  /** Counts the turn's writes from 1: a write replayed after a later one changes nothing. */
  readonly version: number;
  readonly state: TurnState | null;
  readonly status: string;
  readonly error: TurnError | null;
  readonly entries: readonly LogEntry[];
  /** The log's seq before these entries. */
  readonly after: number;
  readonly applied: readonly string[];
  readonly ignored: readonly string[];
  readonly cancelApplied: boolean;
  readonly ended: boolean;
  /** The grants the turn's thread keeps from now on (when they changed), or null. */
  readonly threadGrants?: readonly Grant[] | null;
}

const step = <T>(name: string, run: () => Promise<T>): Promise<T> => DBOS.runStep(run, { name });

/**
 * One write of what `get` and `watch` read, in one statement. Not a DBOS step (a step costs DBOS
 * several statements of its own): a replayed workflow writes it again, which changes nothing: the
 * log entries are keyed by their seq, and the turn's row only takes a write newer than its own (and
 * the thread's grants only a write the turn's row took, while the thread is open).
 */
async function writeCommit(rt: Runtime, id: string, c: Commit): Promise<void> {
  const s = rt.schema;
  const decided = [...c.applied, ...c.ignored];
  await rt.pool.query(
    `WITH l AS (
       INSERT INTO ${s}.log (turn_id, seq, kind, data)
       SELECT $1, $2::bigint + t.ord, t.e->>'kind', t.e->'data' FROM jsonb_array_elements($3::jsonb) WITH ORDINALITY AS t(e, ord)
       ON CONFLICT DO NOTHING
     ), i AS (
       UPDATE ${s}.inbox SET status = CASE WHEN call_id = ANY($9::text[]) THEN 'ignored' ELSE 'applied' END, applied_at = now()
       WHERE turn_id = $1 AND status = 'pending' AND ((kind = 'decision' AND call_id = ANY($8::text[])) OR (kind = 'cancel' AND $10::boolean))
     ), u AS (
       UPDATE ${s}.turns SET state = $4::jsonb, status = $5, error = $6::jsonb, log_seq = $2::bigint + $7::bigint, updated_at = now(),
         ended_at = CASE WHEN $11::boolean THEN coalesce(ended_at, now()) ELSE NULL END, version = $12
       WHERE id = $1 AND version < $12 RETURNING thread
     )
     UPDATE ${s}.threads th SET grants = $13::jsonb FROM u
     WHERE $13::jsonb IS NOT NULL AND th.id = u.thread AND th.closed_at IS NULL`,
    [
      id,
      c.after,
      JSON.stringify(c.entries),
      c.state === null ? null : JSON.stringify(c.state),
      c.status,
      c.error === null ? null : JSON.stringify(c.error),
      c.entries.length,
      decided,
      c.ignored,
      c.cancelApplied,
      c.ended,
      c.version,
      c.threadGrants == null ? null : JSON.stringify(c.threadGrants),
    ],
  );
}

/** The reason of a cancel waiting in the inbox, or null. */
async function pendingCancel(rt: Runtime, id: string): Promise<string | null> {
  const { rows } = await rt.pool.query(
    `SELECT body FROM ${rt.schema}.inbox WHERE turn_id = $1 AND kind = 'cancel' AND status = 'pending'`,
    [id],
  );
  if (rows.length === 0) return null;
  const reason = (rows[0]?.body as { reason?: unknown } | null)?.reason;
  return typeof reason === 'string' ? reason : 'cancelled by the caller';
}

/** Aborts `live` when a cancel arrives in the inbox while a step runs; returns the stop. */
function watchCancel(rt: Runtime, id: string, live: AbortController): () => void {
  const timer = setInterval(() => {
    pendingCancel(rt, id)
      .then((reason) => {
        if (reason !== null) live.abort(reason);
      })
      .catch(() => undefined); // the next look tries again
  }, rt.cancelPollMs);
  return () => clearInterval(timer);
}

/** What a tool batch's step records: core's event, and the dispatcher's grants and counters after it. */
interface BatchOutput {
  readonly event: TurnEvent;
  readonly grants: readonly Grant[];
  readonly budgetUsage: BudgetUsage;
  readonly cancel: string | null;
}

/** What the workflow loads of its turn (a step: a replay sees the same row). */
interface TurnRow {
  readonly seq: number;
  readonly agent: string;
  readonly input: string | null;
  readonly limits: TurnLimitsInput | null;
  readonly thread: string | null;
}

/** Where a turn of a thread starts: its thread's grants and context, or a cancel that came while it waited. */
interface ThreadStart {
  readonly grants: readonly Grant[];
  readonly context: Message[];
  readonly cancel: string | null;
}

/** The turn's workflow body (registered with DBOS as `turnkit.turn`). */
export async function runTurnWorkflow(id: string): Promise<void> {
  const rt = current();
  const row = await step('turnkit.load', async (): Promise<TurnRow | null> => {
    const { rows } = await rt.pool.query(`SELECT seq, agent, input, limits, thread FROM ${rt.schema}.turns WHERE id = $1`, [id]);
    const r = rows[0];
    return r === undefined
      ? null
      : {
          seq: Number(r.seq),
          agent: String(r.agent),
          input: (r.input ?? null) as string | null,
          limits: (r.limits ?? null) as TurnLimitsInput | null,
          thread: (r.thread ?? null) as string | null,
        };
  });
  if (row === null) return; // no such turn: nothing to run
  const start = row.thread === null ? { grants: [], context: [], cancel: null } : await waitForThread(rt, row.thread, row.seq);
  const prepared = prepare(rt, id, row, start);
  if ('error' in prepared) {
    const entries: LogEntry[] = [
      { kind: 'status', data: { status: 'failed', outcome: { status: 'failed', error: prepared.error } } },
    ];
    await writeCommit(rt, id, {
      version: 1,
      state: null,
      status: 'failed',
      error: prepared.error,
      entries,
      after: 0,
      applied: [],
      ignored: [],
      cancelApplied: true,
      ended: true,
    });
  } else await prepared.turn.run(row.input, start.cancel);
  if (row.thread !== null) await handOff(rt, row.thread, row.seq);
}

/**
 * A turn of a thread waits until every earlier turn of its thread has ended (a thread runs one
 * turn at a time, in `seq` order): it looks in a step, and waits for the wake-up message the
 * turn before it sends when it ends (`handOff`). Then it reads its thread's grants (in the same
 * step), its context, and a cancel that came while it waited (taken as it starts, so the thread's
 * turns end in order too, as in the store).
 *
 * The context is read outside a step: it is the messages of the thread's earlier turns, which
 * have all ended (the step said so) and never change again, so a replay reads the same ones,
 * and DBOS does not keep a copy of a thread's conversation per turn (its bytes would grow with
 * the thread). It is read from the latest compaction of those turns on, and folded by the
 * store's `contextOf`.
 */
async function waitForThread(rt: Runtime, thread: string, seq: number): Promise<ThreadStart> {
  for (;;) {
    const look = await step('turnkit.thread', async () => {
      const { rows } = await rt.pool.query(
        `SELECT th.grants, EXISTS (SELECT 1 FROM ${rt.schema}.turns e WHERE e.thread = $1 AND e.seq < $2 AND e.ended_at IS NULL) AS busy
         FROM ${rt.schema}.threads th WHERE th.id = $1`,
        [thread, seq],
      );
      return { busy: rows[0]?.busy === true, grants: (rows[0]?.grants ?? []) as Grant[] };
    });
    if (!look.busy) {
      const cancel = await DBOS.recv<{ reason?: unknown }>(CANCEL_TOPIC, { timeoutSeconds: 0 });
      return {
        grants: look.grants,
        context: await readContext(rt, thread, seq),
        cancel: cancel === null ? null : typeof cancel.reason === 'string' ? cancel.reason : 'cancelled by the caller',
      };
    }
    // Woken when the turn before it ends (or by a cancel's wake-up: it looks again).
    await DBOS.recv(WAKE_TOPIC, { timeoutSeconds: IDLE_WAIT_S });
  }
}

/** The thread's context before turn `seq`: messages and compactions of its earlier turns from the latest compaction on. */
async function readContext(rt: Runtime, thread: string, seq: number): Promise<Message[]> {
  const s = rt.schema;
  const { rows } = await rt.pool.query(
    `WITH earlier AS (SELECT id, seq FROM ${s}.turns WHERE thread = $1 AND seq < $2),
     since AS (SELECT coalesce(max(e.seq), 0) AS seq FROM earlier e WHERE EXISTS (SELECT 1 FROM ${s}.log l WHERE l.turn_id = e.id AND l.kind = 'compaction'))
     SELECT l.kind, l.data FROM earlier e JOIN ${s}.log l ON l.turn_id = e.id
     WHERE e.seq >= (SELECT seq FROM since) AND l.kind IN ('message', 'compaction') ORDER BY e.seq, l.seq`,
    [thread, seq],
  );
  return contextOf(rows);
}

/** Wakes the next turn of the thread, if one waits (a step: a repeated wake-up only makes it look again). */
async function handOff(rt: Runtime, thread: string, seq: number): Promise<void> {
  await step('turnkit.thread_next', async () => {
    const { rows } = await rt.pool.query(
      `SELECT id FROM ${rt.schema}.turns WHERE thread = $1 AND seq > $2 AND ended_at IS NULL ORDER BY seq LIMIT 1`,
      [thread, seq],
    );
    const next = rows[0]?.id;
    if (next === undefined) return null;
    try {
      await DBOS.send(String(next), {}, WAKE_TOPIC);
    } catch (error) {
      // Its workflow does not exist yet: when it starts, it finds this turn ended and does not wait.
      if (!(error instanceof DBOSErrors.DBOSNonExistentWorkflowError)) throw error;
    }
    return String(next);
  });
}

type Prepared = { readonly turn: DbosTurn } | { readonly error: TurnError };

function prepare(rt: Runtime, id: string, row: TurnRow, start: ThreadStart): Prepared {
  if (!Object.hasOwn(rt.agents, row.agent)) {
    const known =
      Object.keys(rt.agents)
        .map((a) => `'${a}'`)
        .join(', ') || '(none)';
    return {
      error: {
        kind: 'unknown_agent',
        message: `No agent '${row.agent}' is registered with the process that ran this turn (it has ${known}). Register the agent with createDbosTurns({ agents }) and submit the turn again.`,
      },
    };
  }
  const agent = rt.agents[row.agent] as AgentDefinition;
  const journal = new Journal(rt, id);
  let root: DispatcherSlot;
  let tree: Tree | null = null;
  try {
    // A turn of many agents: the agents it reaches, checked (as the store's worker checks them),
    // each agent's runtime tools made now, so a bad `models` fails the turn before it starts.
    if (isMultiAgent(agent)) {
      const agents = reachable(row.agent, rt.agents, {
        name: 'the process that ran this turn',
        register: 'createDbosTurns({ agents })',
      });
      for (const name of agents.keys()) runtimeTools(name, agents);
      tree = { agents, root: row.agent };
    }
    // A turn of a thread has what its thread remembered.
    root = slotOf(journal, agent, tree === null ? [] : runtimeTools(row.agent, tree.agents), start.grants);
  } catch (error) {
    return { error: { kind: 'invalid_agent', message: `Agent '${row.agent}' cannot run this turn: ${messageOf(error)}` } };
  }
  // The turn's own limits over the agent's, and the dispatcher's loop-exempt tools, as runTurn joins them.
  const limits = layerLimits([agent.limits, row.limits], root.loopExemptTools());
  // A turn of an agent that may delegate, hand off or change model names its agent (the root of the agent path).
  const named = tree === null ? {} : { agent: row.agent };
  try {
    const state = createTurn(limits === undefined ? { id, ...named } : { id, limits, ...named });
    const thread = { id: row.thread, grants: start.grants, context: start.context };
    return { turn: new DbosTurn(rt, id, agent, journal, root, state, thread, tree) };
  } catch (error) {
    return {
      error: {
        kind: 'invalid_limits',
        message: `The limits of agent '${row.agent}' and this turn do not combine: ${messageOf(error)}`,
      },
    };
  }
}

/** The agents of a turn of many agents: those its root agent reaches, by name, and the root's name. */
interface Tree {
  readonly agents: ReadonlyMap<string, AgentDefinition>;
  readonly root: string;
}

/**
 * The agent's dispatcher over journaling tools (and the runtime tools of a tree's agent, which
 * change nothing outside the turn: not journaled as started), with the grants and counters the
 * turn has so far.
 */
function makeDispatcher(
  journal: Journal,
  agent: AgentDefinition,
  // any: each tool has its own input type.
  runtime: readonly ToolDefinition<any>[],
  grants: readonly Grant[],
  budgetUsage: BudgetUsage | null,
): Dispatcher {
  return createDispatcher({
    tools: [...journalingTools(journal, agent.tools ?? []), ...runtime],
    ...dispatcherRules(agent),
    grants,
    ...(budgetUsage === null ? {} : { budgetUsage }),
  });
}

/** A slot with the agent's dispatcher (see DispatcherSlot). */
// any: each tool has its own input type.
function slotOf(journal: Journal, agent: AgentDefinition, runtime: readonly ToolDefinition<any>[], grants: readonly Grant[]) {
  const remake = (g: readonly Grant[], usage: BudgetUsage | null): Dispatcher =>
    makeDispatcher(journal, agent, runtime, g, usage);
  const idempotent = new Set((agent.tools ?? []).filter((t) => t.idempotent).map((t) => t.name));
  return new DispatcherSlot(remake(grants, null), remake, idempotent);
}

/**
 * The dispatcher of one agent in one turn of the tree, as a handler context holds it: it forwards
 * to the dispatcher of the moment. A tool batch's step records the dispatcher's grants and
 * counters after it, and the next dispatcher is made from that record (a replay does not run the
 * batch), so the context's dispatcher is the same object from the first batch to the last (the
 * driver's approval records and the next model call's tools go through it).
 */
class DispatcherSlot implements Dispatcher {
  constructor(
    public current: Dispatcher,
    /** Makes the agent's dispatcher with these grants and counters. */
    readonly remake: (grants: readonly Grant[], budgetUsage: BudgetUsage | null) => Dispatcher,
    /** The tools the agent marks idempotent. */
    readonly idempotent: ReadonlySet<string>,
  ) {}
  toolSpecs: Dispatcher['toolSpecs'] = () => this.current.toolSpecs();
  has: Dispatcher['has'] = (name) => this.current.has(name);
  get: Dispatcher['get'] = (name) => this.current.get(name);
  list: Dispatcher['list'] = () => this.current.list();
  loopExemptTools: Dispatcher['loopExemptTools'] = () => this.current.loopExemptTools();
  classify: Dispatcher['classify'] = (call, ctx) => this.current.classify(call, ctx);
  execute: Dispatcher['execute'] = (verdict, ctx) => this.current.execute(verdict, ctx);
  dispatch: Dispatcher['dispatch'] = (calls, ctx) => this.current.dispatch(calls, ctx);
  executeApproved: Dispatcher['executeApproved'] = (calls, ctx) => this.current.executeApproved(calls, ctx);
  recordDecision: Dispatcher['recordDecision'] = (call, decision, ctx) => this.current.recordDecision(call, decision, ctx);
  grant: Dispatcher['grant'] = (grant, scope) => this.current.grant(grant, scope);
  grants: Dispatcher['grants'] = (scope) => this.current.grants(scope);
  budgetUsage: Dispatcher['budgetUsage'] = () => this.current.budgetUsage();
}

/**
 * A turn's journal writes, one after another in the order they are asked for (the dispatcher
 * starts a batch's calls in call order: their tools start in that order, as in every interpreter).
 */
class Journal {
  private last: Promise<unknown> = Promise.resolve();
  /** The DBOS steps of the batch in flight, one per call (null between batches). */
  callSteps: CallSteps | null = null;
  /** This run of the workflow (a process's): a start recorded by another run is not this one's to run. */
  private readonly owner = randomUUID();
  /** The journal's key of a call of the turn of the tree that acts now (its own id for a turn of one agent). */
  keyOf: (callId: string) => string = (callId) => callId;
  constructor(
    private readonly rt: Runtime,
    private readonly id: string,
  ) {}

  private write(sql: string, values: unknown[]): Promise<pg.QueryResult> {
    const next = this.last.then(() => this.rt.pool.query(sql, values));
    this.last = next.catch(() => undefined);
    return next;
  }

  /**
   * Records a call as started (committed before its tool runs); false when another run of the
   * workflow started it (two processes driving one turn: the second does not run it again).
   */
  async started(callId: string, name: string): Promise<boolean> {
    const { rows } = await this.write(
      `INSERT INTO ${this.rt.schema}.calls (turn_id, call_id, name, started_at, owner) VALUES ($1, $2, $3, now(), $4)
       ON CONFLICT (turn_id, call_id) DO UPDATE SET owner = calls.owner RETURNING owner`,
      [this.id, this.keyOf(callId), name, this.owner],
    );
    return rows[0]?.owner === this.owner;
  }

  /** Records a call's result; the first result per call stands. */
  async finished(result: ToolResult): Promise<void> {
    await this.write(
      `INSERT INTO ${this.rt.schema}.calls (turn_id, call_id, name, finished_at, result) VALUES ($1, $2, $3, now(), $4::jsonb)
       ON CONFLICT (turn_id, call_id) DO UPDATE SET result = excluded.result, finished_at = excluded.finished_at WHERE calls.result IS NULL`,
      [this.id, this.keyOf(result.callId), result.name, JSON.stringify(result)],
    );
  }
}

/** What a tool call's DBOS step records: whether its tool ran in it, and whether it threw (its result is in the journal). */
interface CallStepRecord {
  readonly ran: boolean;
  readonly threw: boolean;
}

/**
 * One DBOS step per tool call of a batch. DBOS numbers a workflow's steps in the order they are
 * started (synchronously, before any await) and checks each number's step name on a replay, so
 * steps may run at once only when they start in an order that does not depend on timing. The
 * dispatcher reaches a call's tool after its validation, hooks, policy and approvals, which are
 * asynchronous and run concurrently across calls (up to its `concurrency`), so the order in which
 * tools start depends on timing. Hence each call's step is started here, in call order, when the
 * batch begins: it waits until the dispatcher runs that call's tool (the step then journals the
 * start and runs the tool), or until the batch ends without running it (a held, interrupted,
 * denied or parked call). The step records only that; the result is the journal's, and the
 * batch's own step records core's event.
 */
class CallSteps {
  private readonly slots = new Map<string, CallSlot>();
  /**
   * Settles once the tool offered last has started (its start journaled): each call's step enters
   * its body when DBOS has checked for its record, in no fixed order, so a tool waits for the one
   * offered before it, and tools start in the order the dispatcher runs them, as in every interpreter.
   */
  private lastStart: Promise<void> = Promise.resolve();

  constructor(calls: readonly ToolCall[]) {
    // One step per call id (core gives a batch's calls distinct ids; a repeated id would share one).
    for (const call of calls) if (!this.slots.has(call.id)) this.slots.set(call.id, new CallSlot(`turnkit.tool:${call.name}`));
  }

  /**
   * Runs `run` (the call's journaled start and tool) in the call's step, the first time the
   * dispatcher runs the call; its value or error is the tool's, as the dispatcher expects. A
   * retry of the call's tool (the dispatcher's retries) runs outside any step, under the journal.
   */
  run(callId: string, run: (started: () => void) => Promise<unknown>): Promise<unknown> {
    const slot = this.slots.get(callId);
    if (slot === undefined || slot.used) return run(() => undefined);
    slot.used = true;
    const previous = this.lastStart;
    let started: () => void = () => undefined;
    this.lastStart = new Promise<void>((resolve) => {
      started = resolve;
    });
    const inOrder = async (): Promise<unknown> => {
      await previous;
      try {
        return await run(started);
      } finally {
        started();
      }
    };
    return new Promise((resolve, reject) =>
      slot.offer(() =>
        inOrder().then(resolve, (error: unknown) => {
          reject(error);
          throw error;
        }),
      ),
    );
  }

  /** The batch is over: the steps of calls whose tools did not run record so; waits for every step. */
  async close(): Promise<void> {
    for (const slot of this.slots.values()) if (!slot.used) slot.offer(null);
    await Promise.allSettled([...this.slots.values()].map((slot) => slot.done));
  }
}

/** One call's DBOS step: it runs the tool offered to it, or records that none was. */
class CallSlot {
  /** Whether the dispatcher ran the call (its first run was offered). */
  used = false;
  /** Whether the step's body ran (a replay answers a recorded step without it). */
  private entered = false;
  private resolveOffer: (run: (() => Promise<unknown>) | null) => void = () => undefined;
  private readonly offered = new Promise<(() => Promise<unknown>) | null>((resolve) => {
    this.resolveOffer = resolve;
  });
  /** The step (started now: DBOS gives it its number at once). */
  readonly done: Promise<CallStepRecord>;

  constructor(name: string) {
    this.done = step(name, async (): Promise<CallStepRecord> => {
      this.entered = true;
      const run = await this.offered;
      if (run === null) return { ran: false, threw: false };
      try {
        await run();
        return { ran: true, threw: false };
      } catch {
        return { ran: true, threw: true };
      }
    });
    // A step answered from its record (or failed before its body) runs no tool: a run offered to it runs outside it.
    const outside = (): void => {
      if (!this.entered) void this.offered.then((run) => run?.()).catch(() => undefined);
    };
    this.done.then(outside, outside);
  }

  offer(run: (() => Promise<unknown>) | null): void {
    this.resolveOffer(run);
  }
}

/** The agent's tools, each run in its call's DBOS step and journaled as started (committed) before the tool runs. */
// any: each tool has its own input type.
function journalingTools(journal: Journal, tools: readonly ToolDefinition<any>[]): ToolDefinition<any>[] {
  return tools.map((tool) => ({
    ...tool,
    execute(input: unknown, toolCtx: { readonly callId: string; readonly signal: AbortSignal; readonly turnId: string }) {
      // `started` is called as the tool starts (the next call's tool waits for it).
      const run = async (started: () => void): Promise<unknown> => {
        let mine: boolean;
        try {
          mine = await journal.started(toolCtx.callId, tool.name);
        } catch (error) {
          throw new Error(`the call was not started: its start could not be journaled (${messageOf(error)})`);
        }
        if (!mine && tool.idempotent !== true)
          throw new Error(
            'the call was not run: another run of this turn (another process driving it) started it, and the tool is not marked idempotent, so it runs at most once.',
          );
        started();
        return tool.execute(input, toolCtx);
      };
      return journal.callSteps === null ? run(() => undefined) : journal.callSteps.run(toolCtx.callId, run);
    },
  }));
}

class DbosTurn {
  /** The turn's own signal: aborted only when the workflow takes a cancel (a recorded message), so a replay aborts it at the same place. */
  private readonly cancellation = new AbortController();
  private readonly transcript: Message[];
  /** The root state after the last step (the drive's start before it): which turn of the tree acts. */
  private latest: TurnState;
  /** A turn of many agents: the driver's directory of its agents (undefined for a turn of one agent). */
  private readonly directory: HandlerContext['agents'];
  private unwritten: LogEntry[] = [];
  private logSeq = 0;
  private writtenStatus = 'ready';
  private written: TurnState | null = null;
  private applied: string[] = [];
  private ignored: string[] = [];
  private cancelTaken = false;
  private version = 0;
  /** The grants of the turn (its root-level agents': the thread keeps them). */
  private grants: readonly Grant[];
  /** The thread's grants as last written (JSON), so unchanged ones are not written again. */
  private threadGrants: string;

  constructor(
    private readonly rt: Runtime,
    private readonly id: string,
    private readonly agent: AgentDefinition,
    private readonly journal: Journal,
    /** The root agent's dispatcher. */
    private readonly root: DispatcherSlot,
    private readonly state: TurnState,
    /** The turn's thread (null: none), what it remembered and the context the turn starts from. */
    private readonly thread: { readonly id: string | null; readonly grants: readonly Grant[]; readonly context: Message[] },
    private readonly tree: Tree | null,
  ) {
    const system: Message[] = agent.system === undefined ? [] : [{ role: 'system', content: agent.system }];
    this.transcript = [...system, ...thread.context];
    this.grants = thread.grants;
    this.threadGrants = JSON.stringify(thread.grants);
    this.latest = state;
    // A call is journaled and decided under its key in the tree (the store's: tree.ts).
    journal.keyOf = (callId) => activeKeys(this.latest).key(callId);
    this.directory =
      tree === null
        ? undefined
        : directory(tree.agents, (name) => {
            const made = tree.agents.get(name) as AgentDefinition;
            // A child turn starts with no grants (they are its own); a root-level agent (after a handoff) has the turn's.
            const child = activeTurn(this.latest).callPath.length > 0;
            return slotOf(journal, made, runtimeTools(name, tree.agents), child ? [] : this.root.grants());
          });
  }

  /** Drives the turn from its start (`cancel`: a cancel taken while it waited behind its thread). */
  async run(input: string | null, cancel: string | null): Promise<void> {
    if (cancel !== null) {
      this.cancelTaken = true;
      this.cancellation.abort(cancel);
    }
    const [start, effects] = resume(this.state, {
      durable: true,
      ...definedProps({ input: input ?? undefined, cancel: cancel ?? undefined }),
    });
    this.latest = start;
    const { state: end, outcome } = await driveTurn(start, effects, this.context(), this.handlers());
    if (outcome === null && !isTerminal(end)) {
      const error: TurnError = {
        kind: 'internal_error',
        message: `The workflow found nothing to do for a turn in status '${end.status}'.`,
      };
      this.unwritten.push({ kind: 'status', data: { status: 'failed', outcome: { status: 'failed', error } } });
      await this.commit(end, { status: 'failed', error, ended: true });
      return;
    }
    await this.commit(end);
  }

  /** Writes `state` with the log entries since the last write (see writeCommit: a replay's writes change nothing). */
  private async commit(state: TurnState, failed?: { status: string; error: TurnError; ended: boolean }): Promise<void> {
    // A tree whose acting child waits for a decision is `awaiting_approval`, as in the store.
    const status = failed?.status ?? storedStatusOf(state);
    const ended = failed?.ended ?? isTerminal(state);
    if (failed === undefined && status !== this.writtenStatus)
      this.unwritten.push({ kind: 'status', data: { status, outcome: ended ? state.outcome : null } });
    const entries = this.unwritten;
    this.unwritten = [];
    this.version += 1;
    const commit: Commit = {
      version: this.version,
      state,
      status,
      error: failed?.error ?? null,
      entries,
      after: this.logSeq,
      applied: this.applied,
      ignored: this.ignored,
      cancelApplied: this.cancelTaken && ended,
      ended,
      threadGrants: this.changedThreadGrants(),
    };
    this.applied = [];
    this.ignored = [];
    this.logSeq += entries.length;
    this.writtenStatus = status;
    this.written = state;
    await writeCommit(this.rt, this.id, commit);
  }

  /** The grants the thread keeps after this turn's last batch, when they changed since the last write (else null). */
  private changedThreadGrants(): readonly Grant[] | null {
    if (this.thread.id === null) return null;
    const text = JSON.stringify(this.grants);
    if (text === this.threadGrants) return null;
    this.threadGrants = text;
    return this.grants;
  }

  /** The driver's context; its dispatcher forwards to the one of the moment (a tool batch's step gives the next one). */
  private context(): HandlerContext {
    return {
      turnId: this.id,
      model: this.agent.model,
      dispatcher: this.root,
      transcript: this.transcript,
      signal: this.cancellation.signal,
      onStep: (record) => {
        this.latest = record.state;
      },
      ...definedProps({ output: this.agent.output }),
      ...definedProps({ check: this.agent.check }),
      ...definedProps({ compact: this.agent.compact }),
      // A thread is the session of its turns' grants (`remember`).
      ...definedProps({ session: this.thread.id ?? undefined }),
      // A turn of many agents: the driver finds each agent here (a child's transcript starts with the child).
      ...(this.tree === null ? {} : { agents: this.directory, agentPath: [this.tree.root] }),
    };
  }

  /** A child turn's context's turn id and agent path, or null for the root turn's. */
  private childOf(ctx: HandlerContext): { turn: string; agentPath: readonly string[] } | null {
    return ctx.turnId === this.id ? null : { turn: ctx.turnId, agentPath: ctx.agentPath ?? [] };
  }

  private handlers(): EffectHandlers {
    return {
      ...defaultHandlers,
      // A child turn's messages and notices are its own log entries, never the turn's.
      append: (effect, ctx) => {
        ctx.transcript.push(effect.message);
        const child = this.childOf(ctx);
        this.unwritten.push(
          child === null
            ? { kind: 'message', data: effect.message }
            : { kind: 'child', data: { ...child, message: effect.message } },
        );
      },
      emit: (effect, ctx) => {
        const child = this.childOf(ctx);
        this.unwritten.push(
          child === null ? { kind: 'notice', data: effect.notice } : { kind: 'child', data: { ...child, notice: effect.notice } },
        );
      },
      // The boundary after a batch follows from the batch's step: it is written with the next one.
      persist: async (effect, _ctx, state) => {
        if (effect.checkpoint !== 'boundary') await this.commit(state);
      },
      call_llm: (effect, ctx) => this.modelCall(effect, ctx),
      dispatch_tools: (effect, ctx) => this.batch(effect.calls, false, ctx),
      execute_approved: (effect, ctx) => this.batch(effect.calls, true, ctx),
      // The output check is the agent's code: a step, so a replay gets the verdict it gave.
      check_output: (effect, ctx) =>
        step('turnkit.check_output', () =>
          defaultHandlers.check_output(effect, ctx).catch((error) => handlerFailed(effect, error)),
        ),
      // The agent's compaction (core's contract, checked by the shared runCompaction), as the
      // store's worker runs it: what it kept is a log entry, written with the next commit. It is
      // the agent's code run outside a step (as often as every round; a step would record the
      // kept transcript each time): a replay runs it again, and the log keeps the first run's.
      compact: async (effect, ctx) => {
        const child = this.childOf(ctx);
        const first = ctx.transcript[0];
        const system = child === null ? this.agent.system : first?.role === 'system' ? first.content : undefined;
        const { event, kept } = await runStoredCompaction(effect, ctx, system);
        if (kept !== null)
          this.unwritten.push(
            child === null ? { kind: 'compaction', data: kept } : { kind: 'child', data: { ...child, compaction: kept } },
          );
        return event;
      },
      parked: (state) => this.waitForDecisions(state),
      retryWait: (delayMs) => this.wait(delayMs / 1000).then(() => undefined),
    };
  }

  /** A model call as a step: not made when a cancel waits; aborted when one arrives while it runs. */
  private async modelCall(
    effect: Extract<Parameters<EffectHandlers['call_llm']>[0], object>,
    ctx: HandlerContext,
  ): Promise<TurnEvent> {
    const { rt, id } = this;
    const out = await step('turnkit.model', async (): Promise<{ event: TurnEvent | null; cancel: string | null }> => {
      const waiting = await pendingCancel(rt, id);
      if (waiting !== null) return { event: null, cancel: waiting };
      const live = new AbortController();
      const stop = watchCancel(rt, id, live);
      try {
        const event = await defaultHandlers
          .call_llm(effect, { ...ctx, signal: live.signal })
          .catch((error) => handlerFailed(effect, error));
        return { event, cancel: live.signal.aborted ? String(live.signal.reason) : null };
      } finally {
        stop();
      }
    });
    if (out.cancel !== null) await this.takeCancel(out.cancel);
    return out.event ?? { type: 'cancel', reason: this.reason() };
  }

  /**
   * A tool batch as a step. Its calls are journaled: a call is recorded started (its own
   * transaction, committed) before its tool runs and its result the moment it finishes, so a
   * batch run again after a crash answers finished calls from the journal and gives a started,
   * unfinished call `interrupted` unless its tool is idempotent (the store's rule, `protocolStep`).
   */
  private async batch(calls: readonly ToolCall[], approved: boolean, ctx: HandlerContext): Promise<TurnEvent> {
    const { rt, id } = this;
    // The context's dispatcher: the acting agent's (the root's, a handoff's, or a child turn's).
    const slot = ctx.dispatcher;
    if (!(slot instanceof DispatcherSlot))
      throw new Error('A tool batch of a DBOS turn came with a dispatcher the turn did not make.');
    // Each call's step first, in call order; then the batch's step, which runs the dispatcher.
    const callSteps = new CallSteps(calls);
    const out = await step(approved ? 'turnkit.approved_tools' : 'turnkit.tools', async (): Promise<BatchOutput> => {
      const live = new AbortController();
      const stop = watchCancel(rt, id, live);
      this.journal.callSteps = callSteps;
      try {
        const event = await this.runBatch(calls, approved, ctx, slot, live);
        const d = slot.current;
        // The grants of the context's turn (a child's are its own), or of its thread as a session's are (`remember`).
        const scope = ctx.session === undefined ? { turnId: ctx.turnId } : { turnId: ctx.turnId, session: ctx.session };
        return {
          event,
          grants: [...d.grants(), ...d.grants(scope)],
          budgetUsage: d.budgetUsage(),
          cancel: live.signal.aborted ? String(live.signal.reason) : null,
        };
      } finally {
        stop();
        this.journal.callSteps = null;
        await callSteps.close();
      }
    });
    // A replay returns the batch's record at once: its calls' steps return theirs.
    await callSteps.close();
    // The dispatcher after the batch, from what the step recorded (a replay did not run the batch).
    slot.current = slot.remake(out.grants, out.budgetUsage);
    // A root-level agent's grants are the turn's (and its thread's); a child turn's stay its own.
    if (ctx.turnId === id) this.grants = uniqueGrants([...this.grants, ...out.grants]);
    if (out.cancel !== null) await this.takeCancel(out.cancel);
    return out.event;
  }

  private async runBatch(
    calls: readonly ToolCall[],
    approved: boolean,
    ctx: HandlerContext,
    slot: DispatcherSlot,
    live: AbortController,
  ): Promise<TurnEvent> {
    const { rt, id } = this;
    const signal = live.signal;
    // The calls by their journal keys (a child turn's under its path).
    const byKey = new Map(calls.map((c) => [this.journal.keyOf(c.id), c.id]));
    // The journal's rows of these calls, and a cancel waiting already (the row whose call_id is null).
    const { rows: read } = await rt.pool.query(
      `SELECT call_id, result, started_at IS NOT NULL AS started FROM ${rt.schema}.calls WHERE turn_id = $1 AND call_id = ANY($2::text[])
       UNION ALL SELECT NULL, body, false FROM ${rt.schema}.inbox WHERE turn_id = $1 AND kind = 'cancel' AND status = 'pending'`,
      [id, [...byKey.keys()]],
    );
    const rows = read
      .filter((r) => r.call_id !== null && byKey.has(String(r.call_id)))
      .map((r) => ({ ...r, call_id: byKey.get(String(r.call_id)) as string }));
    const waiting = read.find((r) => r.call_id === null);
    // A cancel waiting already: the journal's results are kept, the other calls are cancelled without running.
    if (waiting !== undefined) {
      const reason = (waiting.result as { reason?: unknown } | null)?.reason;
      live.abort(typeof reason === 'string' ? reason : 'cancelled by the caller');
    }
    const known = new Map<string, ToolResult>();
    for (const r of rows) if (r.result !== null) known.set(String(r.call_id), r.result as ToolResult);
    const started = rows.filter((r) => r.result === null && r.started === true).map((r) => String(r.call_id));
    const [, decisions] = protocolStep(openHold(id, 0), {
      type: 'journal_read',
      calls: calls.map((c) => ({ id: c.id, idempotent: slot.idempotent.has(c.name) })),
      results: [...known.keys()],
      started,
    });
    const byId = new Map(calls.map((c) => [c.id, c]));
    const toRun: ToolCall[] = [];
    for (const d of decisions) {
      const call = 'callId' in d ? byId.get(d.callId) : undefined;
      if (call === undefined) continue;
      if (d.type === 'run_call') toRun.push(call);
      else if (d.type === 'write_interrupted') {
        const result: ToolResult = { callId: call.id, name: call.name, output: INTERRUPTED, isError: true };
        await this.journal.finished(result);
        known.set(call.id, result);
      }
    }
    const held = calls.flatMap((c) => known.get(c.id) ?? []);
    const writes: Promise<void>[] = [];
    const records: CallRecord[] = [];
    const dispatchCtx: DispatchContext = {
      turnId: ctx.turnId,
      signal,
      onResult: (result) => void writes.push(this.journal.finished(result)),
      onRecord: (record) => void records.push(record),
      transcript: ctx.transcript,
      ...definedProps({ session: ctx.session }),
    };
    const audit = (): { records?: CallRecord[] } => (records.length === 0 ? {} : { records });
    const d = slot.current;
    if (approved) {
      const ran = toRun.length === 0 ? [] : await d.executeApproved(toRun, dispatchCtx);
      await Promise.all(writes);
      return { type: 'approved_tools_completed', results: [...held, ...ran], ...audit() };
    }
    const outcome = toRun.length === 0 ? { results: [], parked: [] } : await d.dispatch(toRun, dispatchCtx);
    await Promise.all(writes);
    const results = [...held, ...outcome.results];
    return outcome.parked.length > 0
      ? { type: 'tools_parked', held: results, parked: outcome.parked, at: Date.now(), ...audit() }
      : { type: 'tools_completed', results, ...audit() };
  }

  /** Takes the cancel's message (its reason, if it carries one) and aborts the turn's signal. */
  private async takeCancel(fallback: string): Promise<void> {
    const message = await DBOS.recv<{ reason?: unknown }>(CANCEL_TOPIC, { timeoutSeconds: 0 });
    const reason = typeof message?.reason === 'string' ? message.reason : fallback;
    this.cancelTaken = true;
    this.cancellation.abort(reason);
  }

  private reason(): string {
    const r = this.cancellation.signal.reason;
    return typeof r === 'string' ? r : 'cancelled by the caller';
  }

  /** A durable wait of `seconds` that a cancel ends (DBOS records when it ends: a replay waits only what is left). */
  private async wait(seconds: number): Promise<boolean> {
    const message = await DBOS.recv<{ reason?: unknown }>(CANCEL_TOPIC, { timeoutSeconds: seconds });
    if (message === null) return false;
    this.cancelTaken = true;
    this.cancellation.abort(typeof message.reason === 'string' ? message.reason : 'cancelled by the caller');
    return true;
  }

  /**
   * The parked turn's next event: decisions received on the parked calls' topics, an expired
   * approval (core says when: `approvalDeadline`), or null after a cancel. Waits for a wake-up
   * message (a decision or cancel was sent) or the deadline, durably.
   */
  private async waitForDecisions(state: TurnState): Promise<TurnEvent | null> {
    // `state` is the parked turn of the tree (a child's, or the root itself); the root is written.
    const root = this.latest;
    if (this.written !== root || this.unwritten.length > 0) await this.commit(root);
    // A child turn's call is decided under its key (its path in the tree), as in the store.
    const { key } = activeKeys(root);
    for (;;) {
      const cancel = await DBOS.recv<{ reason?: unknown }>(CANCEL_TOPIC, { timeoutSeconds: 0 });
      if (cancel !== null) {
        this.cancelTaken = true;
        this.cancellation.abort(typeof cancel.reason === 'string' ? cancel.reason : 'cancelled by the caller');
        return null;
      }
      const decisions: Record<string, ApprovalDecision> = {};
      let any = false;
      for (const parked of undecided(state)) {
        const message = await DBOS.recv<{ decision: ApprovalDecision }>(decisionTopic(key(parked.call.id)), {
          timeoutSeconds: 0,
        });
        if (message === null) continue;
        any = true;
        // defineProperty: a call id such as `__proto__` is a plain key.
        Object.defineProperty(decisions, parked.call.id, {
          value: message.decision,
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
      if (any) {
        const event: TurnEvent = { type: 'approvals_decided', decisions };
        // Decisions core does not take are written `ignored` with the next commit.
        const taken = new Set(decisionsTaken(state, event).map((t) => t.call.id));
        for (const callId of Object.keys(decisions)) (taken.has(callId) ? this.applied : this.ignored).push(key(callId));
        return event;
      }
      const deadline = approvalDeadline(state);
      const now = await DBOS.now();
      if (deadline !== null && deadline <= now) return { type: 'approval_expired', now };
      const seconds = deadline === null ? IDLE_WAIT_S : Math.min(IDLE_WAIT_S, (deadline - now) / 1000);
      await DBOS.recv(WAKE_TOPIC, { timeoutSeconds: seconds });
    }
  }
}
