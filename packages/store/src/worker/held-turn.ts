// One turn in one worker: the messages and notices not yet written, the handlers the driver calls,
// and the lease renewal. `persist` and the end of a drive write everything since the last write as
// one compare-and-swap under the lease's token. Which inbox rows are taken and written, and whether
// a write may happen at all, is the protocol's decision (the fence's `decide`).

import {
  approvalDeadline,
  decisionsTaken,
  isTerminal,
  type ApprovalDecision,
  type Effect,
  type Message,
  type TurnEvent,
  type TurnState,
} from '@turnkit/core';
import { activeTurn, definedProps } from '@turnkit/core/internal';
import type { Dispatcher, Grant } from '@turnkit/dispatch';
import { defaultHandlers, type EffectHandlers, type HandlerContext } from '@turnkit/inline/driver';
import { crashPoint } from '../crash.js';
import { storedStatusOf } from '../statuses.js';
import { RetryParked, type Fence } from './fence.js';
import { type ActivationObserver, type ActivationStatus, traceContextText } from './observe.js';
import type { InboxRow, ProtocolEffect } from './protocol.js';
import { runJournaledBatch } from './tool-journal.js';
import { activeKeys, type AgentDirectory, type ChildDispatchState, type SavedDispatcher, splitKey } from './tree.js';
import type { Commit, LogItem, PendingInbox } from '../types.js';
import type { AgentDefinition } from './types.js';

/**
 * What a held turn of many agents has besides its root agent (docs/agents.md): the directory the
 * driver finds each agent's model and dispatcher in, the running child turns' transcripts and
 * grants as stored, and the tools each agent marks idempotent.
 */
export interface HeldTree {
  readonly directory: AgentDirectory;
  readonly childTranscripts: Record<string, Message[]>;
  readonly idempotent: ReadonlyMap<string, ReadonlySet<string>>;
}

/**
 * The dispatchers made for a child turn in this activation (one per agent that acted in it: its
 * own, and after a handoff in it the new agent's), and the child's grants last written (JSON).
 */
interface ChildDispatcher {
  readonly dispatchers: Dispatcher[];
  readonly agentPath: readonly string[];
  written: string;
}

/**
 * A dispatcher made in this activation whose budget counts are `child` log entries: a child turn's
 * agent's, or a root-level agent's after a handoff (`turn` is then the root turn's own id), with
 * the agent path its entries carry (ending with its agent) and its counts last written (JSON).
 */
interface CountedDispatcher {
  readonly turn: string;
  readonly agentPath: readonly string[];
  readonly dispatcher: Dispatcher;
  counted: string;
}

/** The longest wait a turn row's `run_after` takes at once; a later deadline is reached in steps. */
const MAX_WAIT_MS = 2_147_483_647;

export class HeldTurn {
  /** The messages and notices not yet written, in the order the turn made them. */
  private readonly unwritten: LogItem[] = [];
  /** The thread's grants as last read or written (JSON), so unchanged ones are not written again. */
  private threadGrants: string;
  /** Inbox rows taken for core that core did not apply, for the next commit to mark `ignored`. */
  private readonly ignoredRows: string[] = [];
  private readonly idempotent: ReadonlySet<string>;
  /** The state after the last step (what a retry parks). */
  private latest: TurnState | null = null;
  /** The root state the drive started from (before its first step). */
  private started: TurnState | null = null;
  /** A turn of many agents: its tree's parts (null for a turn of one agent). */
  private tree: HeldTree | null = null;
  /** The dispatchers of child turns made in this activation, by child turn id. */
  private readonly children = new Map<string, ChildDispatcher>();
  /** The dispatchers of root-level agents after a handoff: their grants are the turn's. */
  private readonly rootDispatchers: Dispatcher[] = [];
  /** The dispatchers of this activation whose budget counts are log entries (all but the root agent's). */
  private readonly counted: CountedDispatcher[] = [];
  /** A model call's retry, parked in the database instead of waited for here. */
  private retry: {
    readonly state: TurnState;
    readonly delayMs: number;
    readonly log: LogItem[];
  } | null = null;

  /** The turn's time (epoch ms, the database's clock): when a batch parks, and whether an approval is due. */
  readonly clock: () => number;

  /** The trace context as last saved (JSON text), so an unchanged one is not written again. */
  private savedTrace: string | null;
  private traceRefused = false;
  /** Stops the lease's renewal (set by `keepLease`). */
  private stopRenewal: () => void = () => undefined;

  constructor(
    readonly fence: Fence,
    readonly agent: AgentDefinition,
    readonly dispatcher: Dispatcher,
    private readonly observer: ActivationObserver | null = null,
    claimedTrace: unknown = null,
    claimedAt: number = Date.now(),
    /** The turn's thread (its grants belong to it, as a session's do), or null. */
    readonly thread: string | null = null,
    /** The root agent's name (the turn's agent). */
    readonly agentName: string = '',
  ) {
    this.threadGrants = JSON.stringify(dispatcher.grants());
    this.savedTrace = claimedTrace === null ? null : JSON.stringify(claimedTrace);
    // The database's clock at the claim, carried forward by this process's monotonic clock.
    const started = performance.now();
    this.clock = () => Math.floor(claimedAt + (performance.now() - started));
    this.idempotent = new Set((agent.tools ?? []).filter((t) => t.idempotent).map((t) => t.name));
  }

  /**
   * Writes `current` with everything since the last write; `release` gives the lease back. A
   * `derivable` state may be skipped, and a state about to run its batch (`batch`) deferred to the
   * batch's first journal write (the protocol decides): its messages and notices wait for the
   * write that carries them.
   */
  async write(current: TurnState, release: boolean, derivable = false, batch = false): Promise<boolean> {
    const effects = this.fence.decide({ type: 'write', terminal: isTerminal(current), release, derivable, batch });
    if (effects.some((e) => e.type === 'skip_write')) return false;
    if (effects.some((e) => e.type === 'defer_write')) {
      // Nothing is written yet: a crash from here loses what a crash before a commit loses.
      crashPoint('before_commit');
      this.fence.defer(this.commitOf(current, false));
      return false;
    }
    const commit = effects.find((e) => e.type === 'commit');
    // No renewal after the write that gives the lease back (see letGo).
    if (release || isTerminal(current)) this.letGo();
    if (commit === undefined) {
      this.fence.check();
      throw new Error(`The protocol refused a write of turn '${this.fence.lease.id}' that it did not lose.`);
    }
    const lease = this.fence.fencedLease(commit.token);
    // A deferred state this write supersedes: its log entries and ignored rows come first.
    const deferred = this.fence.takeDeferred();
    const latest = this.commitOf(current, release);
    crashPoint('before_commit');
    await this.fence.write(() =>
      this.fence.store.commit(lease, {
        ...(deferred === null ? latest : carried(deferred, latest)),
        applied: [...commit.applied],
      }),
    );
    this.fence.decide({ type: 'committed', applied: commit.applied });
    return true;
  }

  /** The commit of `current` with everything since the last write (without the inbox rows applied: the protocol gives those). */
  private commitOf(current: TurnState, release: boolean): Omit<Commit, 'applied'> {
    this.dispatcherEntries();
    // A parked turn whose approval expires is woken then (core says when: approvalDeadline).
    const deadline = release ? approvalDeadline(current) : null;
    const wake = deadline === null ? {} : { retryAfterMs: Math.min(Math.max(1, deadline - this.clock()), MAX_WAIT_MS) };
    return {
      state: current,
      log: this.unwritten.splice(0),
      ...wake,
      ignored: this.ignoredRows.splice(0),
      ...this.grants(this.fence.lease.id),
      budgetUsage: this.dispatcher.budgetUsage(),
      release,
      ...this.traceContext(),
    };
  }

  /**
   * The claim's grants (for this turn's dispatcher) and those given during this run, which belong
   * to the turn, or to its thread as a session's do; a thread keeps them when they changed.
   */
  private grants(turnId: string): { grants: Grant[]; threadGrants?: Grant[] } {
    const scope = this.thread === null ? { turnId } : { turnId, session: this.thread };
    const grants = uniqueGrants([this.dispatcher, ...this.rootDispatchers].flatMap((d) => [...d.grants(), ...d.grants(scope)]));
    if (this.thread === null) return { grants };
    const text = JSON.stringify(grants);
    if (text === this.threadGrants) return { grants };
    this.threadGrants = text;
    return { grants, threadGrants: grants };
  }

  /** Uses the parts of a turn of many agents (before `context`). */
  useTree(tree: HeldTree, started: TurnState): void {
    this.tree = tree;
    this.started = started;
  }

  /** The root state as it is now (the last step's, or the drive's start). */
  private root(): TurnState | null {
    return this.latest ?? this.started;
  }

  /** The journal and inbox key of a call of the turn of the tree that acts now (its own id for a turn of one agent). */
  readonly keyOf = (callId: string): string => {
    const root = this.tree === null ? null : this.root();
    return root === null ? callId : activeKeys(root).key(callId);
  };

  /**
   * The dispatcher of agent `agent` of the tree (`make` makes it), for the turn of the tree that
   * acts now. Its budget counts start from what was written for this agent in that turn (`stored`,
   * by turn id: a child's, or the root turn's for an agent the root handed off to), and what it
   * counts from now on is written as that turn's log entries (`dispatcherEntries`; docs/agents.md),
   * as the root agent's own counts are written with the turn's row. A child turn's grants start
   * from what that child remembered and are written with it (a child's grants are its own); a
   * root-level one's (after a handoff) are the turn's.
   */
  dispatcherFor(
    agent: string,
    make: (saved: SavedDispatcher) => Dispatcher,
    stored: ReadonlyMap<string, ChildDispatchState>,
    rootGrants: readonly Grant[],
  ): Dispatcher {
    const root = this.root();
    const active = root === null ? null : activeTurn(root);
    const child = active !== null && active.callPath.length > 0 ? active : null;
    const turn = child === null ? this.fence.lease.id : child.state.id;
    const saved = stored.get(turn);
    const grants = child === null ? rootGrants : (saved?.grants ?? []);
    const made = make({ grants, budgetUsage: saved?.budgetUsage.get(agent) ?? null });
    const agentPath = [...(active?.agentPath ?? []).slice(0, -1), agent];
    this.counted.push({ turn, agentPath, dispatcher: made, counted: JSON.stringify(made.budgetUsage()) });
    if (child === null) {
      this.rootDispatchers.push(made);
      return made;
    }
    // A child turn's dispatchers (its agent's, and after a handoff in it, the new agent's) share its grants.
    const held = this.children.get(turn);
    if (held === undefined)
      this.children.set(turn, { dispatchers: [made], agentPath: child.agentPath, written: JSON.stringify(grants) });
    else held.dispatchers.push(made);
    return made;
  }

  /**
   * What this activation's dispatchers other than the root agent's hold now, as `child` log
   * entries where it changed: the grants each child turn remembers, and each agent's budget counts
   * (a child's agent's under the child, a root-level handoff agent's under the root turn's id).
   */
  private dispatcherEntries(): void {
    for (const [turn, child] of this.children) {
      const scope = this.thread === null ? { turnId: turn } : { turnId: turn, session: this.thread };
      const grants = uniqueGrants(child.dispatchers.flatMap((d) => [...d.grants(), ...d.grants(scope)]));
      const text = JSON.stringify(grants);
      if (text === child.written) continue;
      child.written = text;
      this.unwritten.push({ child: { turn, agentPath: child.agentPath, grants } });
    }
    for (const own of this.counted) {
      const budgetUsage = own.dispatcher.budgetUsage();
      const counted = JSON.stringify(budgetUsage);
      if (counted === own.counted) continue;
      own.counted = counted;
      this.unwritten.push({ child: { turn: own.turn, agentPath: own.agentPath, budgetUsage } });
    }
  }

  /** A child turn's context's turn id and agent path, or null for the root turn's. */
  private childOf(ctx: HandlerContext): { turn: string; agentPath: readonly string[] } | null {
    return ctx.turnId === this.fence.lease.id ? null : { turn: ctx.turnId, agentPath: ctx.agentPath ?? [] };
  }

  /** The observer's trace context for the next write, when it changed since the last one. */
  private traceContext(): { traceContext?: string } {
    if (this.traceRefused) return {};
    const text = traceContextText(this.observer, this.savedTrace, (e) => {
      this.traceRefused = true; // reported once per activation
      this.fence.report(e, this.fence.lease.id);
    });
    if (text === undefined) return {};
    this.savedTrace = text;
    return { traceContext: text };
  }

  /** Tells the observer the activation is over (once; a fault in it is reported). */
  endActivation(status: ActivationStatus): void {
    const observer = this.observer;
    if (observer?.end === undefined) return;
    try {
      observer.end({ status });
    } catch (error) {
      this.fence.report(error, this.fence.lease.id);
    }
  }

  /**
   * Sees each effect before the driver performs it. A model call core marked as a retry after a
   * wait is not waited for here: the drive stops (nothing more is written by it) and
   * `parkRetry` writes the state with the time the turn may run again.
   */
  private onEffect(given: Effect): void {
    // A child turn's model call waits in the database too: the stored state is the root's, which holds the child.
    let effect = given;
    while (effect.type === 'child') effect = effect.effect;
    if (effect.type !== 'call_llm' || this.latest === null || this.retry !== null) return;
    const delayMs = effect.request.delayMs ?? 0;
    if (delayMs <= 0) return;
    this.retry = { state: this.latest, delayMs, log: this.unwritten.splice(0) };
    this.fence.lose(new RetryParked(this.fence.lease.id, delayMs));
  }

  /** Writes the retry `onEffect` parked (the state before the wait) and gives the turn back until it is due. */
  async parkRetry(effect: Extract<ProtocolEffect, { type: 'park_retry' }>): Promise<void> {
    const retry = this.retry;
    if (retry === null) throw new Error('parkRetry: no retry was parked');
    const lease = this.fence.fencedLease(effect.token);
    this.dispatcherEntries();
    crashPoint('before_commit');
    // A deferred state before the retry's (none in practice: a batch's state is written before the next model call) goes first.
    const deferred = this.fence.takeDeferred();
    await this.fence.store.commit(lease, {
      state: retry.state,
      log: [...deferredLog(deferred), ...retry.log],
      ignored: [...(deferred?.ignored ?? [])],
      applied: [...effect.applied],
      ...this.grants(lease.id),
      budgetUsage: this.dispatcher.budgetUsage(),
      release: true,
      retryAfterMs: retry.delayMs,
      ...this.traceContext(),
    });
  }

  /** Takes a cancel waiting in `rows` (the protocol decides): aborts the turn's work and returns the reason (else null). */
  takeCancel(rows: readonly PendingInbox[]): string | null {
    const taken = this.fence.decide({ type: 'inbox_read', rows: rows.map(inboxRow), parked: false });
    const cancel = taken.find((e) => e.type === 'take_cancel');
    return cancel === undefined ? null : this.cancel(rows, cancel.row);
  }

  private cancel(rows: readonly PendingInbox[], id: string): string {
    const reason = rows.find((r) => r.inboxId === id)?.reason ?? 'cancelled by the caller';
    this.fence.cancellation.abort(reason);
    return reason;
  }

  /** The event for a parked turn: the decisions waiting in the inbox (null: none, or a cancel). */
  async takeDecisions(current: TurnState): Promise<TurnEvent | null> {
    const { store, lease } = this.fence;
    let inbox: PendingInbox[];
    try {
      inbox = await this.fence.write(() => store.pendingInbox(lease));
    } catch {
      return null; // the fence is tripped: the drive ends without writing
    }
    const taken = this.fence.decide({ type: 'inbox_read', rows: inbox.map(inboxRow), parked: true });
    const cancel = taken.find((e) => e.type === 'take_cancel');
    if (cancel !== undefined) {
      this.cancel(inbox, cancel.row);
      return null;
    }
    const apply = taken.find((e) => e.type === 'apply_decisions');
    if (apply === undefined) {
      // Nobody decided: an approval past its deadline expires (core decides which calls are due).
      const deadline = approvalDeadline(current);
      const now = this.clock();
      return deadline !== null && deadline <= now ? { type: 'approval_expired', now } : null;
    }
    // A row is keyed by the call's key (tree.ts): a child turn's call by its path. Rows of another
    // turn of the tree than the one parked now decide nothing here.
    const ownId = (row: PendingInbox | undefined): string | null => {
      if (row?.callId == null) return null;
      const { callId } = splitKey(row.callId);
      return this.keyOf(callId) === row.callId ? callId : null;
    };
    const decisions: Record<string, ApprovalDecision> = {};
    for (const id of apply.rows) {
      const row = inbox.find((r) => r.inboxId === id);
      const callId = ownId(row);
      if (callId === null) continue;
      // defineProperty: a call id such as `__proto__` is a plain key.
      Object.defineProperty(decisions, callId, { value: row?.decision, enumerable: true, writable: true, configurable: true });
    }
    const event: TurnEvent = { type: 'approvals_decided', decisions };
    // Rows core does not take (no such parked call, decided already, not a decision) are written
    // `ignored` with the commit that settles them; the driver records the taken ones (recordTaken).
    const decided = new Set(decisionsTaken(current, event).map((t) => t.call.id));
    for (const id of apply.rows) {
      const callId = ownId(inbox.find((r) => r.inboxId === id));
      if (callId === null || !decided.has(callId)) this.ignoredRows.push(id);
    }
    return event;
  }

  handlers(): EffectHandlers {
    return {
      ...defaultHandlers,
      // A child turn's messages and notices are its own log entries (tree.ts), never the turn's.
      append: (effect, ctx) => {
        ctx.transcript.push(effect.message);
        const child = this.childOf(ctx);
        this.unwritten.push(child === null ? { message: effect.message } : { child: { ...child, message: effect.message } });
      },
      emit: (effect, ctx) => {
        const child = this.childOf(ctx);
        this.unwritten.push(child === null ? { notice: effect.notice } : { child: { ...child, notice: effect.notice } });
      },
      persist: async (effect, _ctx, current) => {
        // The boundary after a batch is derivable: every result of the batch went through the
        // journal (the dispatcher announces each one, denials included), and core's `resume` of
        // the `dispatching` state before it, given those results, makes the same state again.
        // A `dispatching` state rides on its batch's first call's start (tool-journal.ts).
        const written = await this.write(current, false, effect.checkpoint === 'boundary', effect.checkpoint === 'dispatching');
        if (written && current.status === 'dispatching') crashPoint('dispatching_persisted');
      },
      // A parked batch says when it parked, so core can give each parked call its deadline.
      // The context's dispatcher: the acting agent's (after a handoff, or in a child turn), journaling under the call's key.
      dispatch_tools: async (effect, ctx) => {
        const event = await runJournaledBatch(
          effect.calls,
          false,
          ctx,
          this.fence,
          ctx.dispatcher,
          this.idempotentOf(ctx),
          this.keyOf,
        );
        return event.type === 'tools_parked' ? { ...event, at: this.clock() } : event;
      },
      execute_approved: (effect, ctx) =>
        runJournaledBatch(effect.calls, true, ctx, this.fence, ctx.dispatcher, this.idempotentOf(ctx), this.keyOf),
      // The agent's compaction (core's contract, checked by the shared runCompaction); what it kept
      // is written with the next write, placed after the messages appended before it.
      compact: async (effect, ctx) => {
        const child = this.childOf(ctx);
        const first = ctx.transcript[0];
        const system = child === null ? this.agent.system : first?.role === 'system' ? first.content : undefined;
        const { event, kept } = await runStoredCompaction(effect, ctx, system);
        if (kept !== null) this.unwritten.push(child === null ? { compaction: kept } : { child: { ...child, compaction: kept } });
        return event;
      },
      parked: (current) => this.takeDecisions(current),
    };
  }

  /** The tools the context's agent marks idempotent. */
  private idempotentOf(ctx: HandlerContext): ReadonlySet<string> {
    const name = ctx.agentPath?.at(-1);
    return (name === undefined ? undefined : this.tree?.idempotent.get(name)) ?? this.idempotent;
  }

  /** The driver's context: the agent's model and options, the transcript so far (with the system prompt). */
  context(transcript: readonly Message[]): HandlerContext {
    const { agent, fence } = this;
    const cancellation = fence.cancellation;
    const hooks = this.observer?.hooks;
    return {
      turnId: fence.lease.id,
      model: agent.model,
      dispatcher: this.dispatcher,
      transcript: agent.system === undefined ? [...transcript] : [{ role: 'system', content: agent.system }, ...transcript],
      signal: cancellation.signal,
      onEffect: (effect) => {
        this.onEffect(effect);
        hooks?.onEffect?.(effect);
      },
      onStep: (record) => {
        this.latest = record.state;
        hooks?.onStep?.(record);
      },
      ...definedProps({ output: agent.output }),
      ...definedProps({ check: agent.check }),
      ...definedProps({ compact: agent.compact }),
      // A thread is the session of its turns' grants (`remember`).
      ...definedProps({ session: this.thread ?? undefined }),
      // A turn of many agents: the driver finds each agent and each running child's transcript here.
      ...(this.tree === null
        ? {}
        : {
            agents: this.tree.directory,
            agentPath: [this.agentName],
            childTranscripts: this.tree.childTranscripts,
          }),
    };
  }

  /**
   * Stops renewing the lease, before a write that gives it back (a release, the turn's end): a
   * renewal sent earlier that reaches the database after that write is refused there, and its
   * refusal is no loss of the turn.
   */
  letGo(): void {
    this.stopRenewal();
  }

  /** Keeps the lease while the turn runs and hears a cancel that arrives meanwhile; returns the stop. */
  keepLease(leaseMs: number): () => void {
    const { store, lease, report } = this.fence;
    let stopped = false;
    const renewal = setInterval(
      () => {
        store
          .renew(lease, leaseMs)
          .then(() => (stopped ? [] : store.pendingInbox(lease)))
          .then((rows) => void (stopped ? null : this.takeCancel(rows)))
          .catch((error: unknown) => {
            // Once the lease is given back, a renewal still in flight is refused: that loses nothing.
            if (stopped) return;
            if (!this.fence.caught(error)) report(error, lease.id);
          });
      },
      Math.max(1, Math.floor(leaseMs / 3)),
    );
    const stop = (): void => {
      stopped = true;
      clearInterval(renewal);
    };
    this.stopRenewal = stop;
    return stop;
  }
}

/** A transcript without the system prompt `system` at its head (the prompt is code: it is not stored). */
function withoutSystem(transcript: readonly Message[], system: string | undefined): Message[] {
  const first = transcript[0];
  return system !== undefined && first?.role === 'system' && first.content === system ? transcript.slice(1) : [...transcript];
}

/**
 * A `compact` effect as a durable interpreter keeps it: the agent's compaction run by the default
 * handler (core's contract, checked by the shared runCompaction), and what it kept, without the
 * agent's `system` prompt at its head (the prompt is code: it is not stored), when it changed the
 * transcript; `kept` is null when it left the transcript as it was. The caller writes `kept` as a
 * log entry with its next write.
 */
export async function runStoredCompaction(
  effect: Parameters<EffectHandlers['compact']>[0],
  ctx: HandlerContext,
  system: string | undefined,
): Promise<{ readonly event: Awaited<ReturnType<EffectHandlers['compact']>>; readonly kept: Message[] | null }> {
  if (ctx.compact === undefined) return { event: await defaultHandlers.compact(effect, ctx), kept: null };
  const before = ctx.transcript.slice();
  const event = await defaultHandlers.compact(effect, ctx);
  const after = ctx.transcript;
  const changed = after.length !== before.length || after.some((m, i) => m !== before[i]);
  return { event, kept: changed ? withoutSystem(after, system) : null };
}

/** A deferred commit carried by a later one: the later state, grants, counts and lease; the log entries and ignored rows of both, in order. */
/**
 * A deferred commit's log for a later write that carries it: its entries, then its state's status,
 * which the log shows as it would have had the deferred state been written alone.
 */
function deferredLog(deferred: Omit<Commit, 'applied'> | null): LogItem[] {
  if (deferred === null) return [];
  const status: LogItem[] = deferred.state === undefined ? [] : [{ status: storedStatusOf(deferred.state) }];
  return [...(deferred.log ?? []), ...status];
}

function carried(deferred: Omit<Commit, 'applied'>, latest: Omit<Commit, 'applied'>): Omit<Commit, 'applied'> {
  return {
    ...deferred,
    ...latest,
    log: [...deferredLog(deferred), ...(latest.log ?? [])],
    ignored: [...(deferred.ignored ?? []), ...(latest.ignored ?? [])],
  };
}

/** Grants without repeats (the same grant held by two of a turn's dispatchers is one): the store's worker and the DBOS workflow. */
export function uniqueGrants(grants: readonly Grant[]): Grant[] {
  const seen = new Set<string>();
  return grants.filter((g) => {
    const key = JSON.stringify(g);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function inboxRow(row: PendingInbox): InboxRow {
  return { id: row.inboxId, kind: row.kind, callId: row.callId };
}
