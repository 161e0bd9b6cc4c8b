// What a store keeps and hands out: what a caller submits and reads back, and what a worker claims
// and writes under its lease. Everything stored is plain JSON.

import type {
  ApprovalDecision,
  Message,
  Notice,
  Outcome,
  ParkedCall,
  ToolResult,
  TurnError,
  TurnLimitsInput,
  TurnState,
} from '@turnkit/core';
import type { Grant } from '@turnkit/dispatch';
import type { BudgetUsage } from '@turnkit/dispatch/internal';

/** A turn's status: core's status, or `failed` when the store failed it (unknown agent, unreadable state). */
export type StoredStatus = TurnState['status'];

/** What `store.submit` takes: the agent that runs the turn, its input, and optionally its id, limits and thread. */
export interface SubmitOptions {
  /** The name of an agent a worker registers (`createWorker({ agents: { [name]: … } })`). */
  readonly agent: string;
  /** The user's message that starts the turn. Without it the turn starts from its thread's conversation as it is. */
  readonly input?: string;
  /** Default: `turn_<uuid>`, a version 7 UUID (time-ordered: see `newTurnId`). Submitting an id that exists is an error. */
  readonly id?: string;
  /** Merged over the agent's limits (these win). Checked now: a bad limit throws here. */
  readonly limits?: TurnLimitsInput;
  /**
   * The thread this turn continues (same id rules as `id`): the turn starts from the thread's
   * conversation (its earlier turns' transcript, after compaction). A new id starts a new thread.
   * A thread runs one turn at a time: see `whenBusy`.
   */
  readonly thread?: string;
  /**
   * With `thread`, when a turn of the thread has not ended (it runs, is parked or waits):
   * `'wait'` (default) queues this turn behind it; `'refuse'` throws ThreadBusyError and stores nothing.
   */
  readonly whenBusy?: 'wait' | 'refuse';
}

/** A decision or cancel as the inbox holds it: `pending` until a worker applies it with the state it changes. */
export interface InboxEntry {
  /** A decision on a parked call, or a cancel of the turn. */
  readonly kind: 'decision' | 'cancel';
  /** The call decided (decisions only; a child turn's call: its id in that child turn). */
  readonly callId: string | null;
  /** For a decision on a call of a child turn (docs/agents.md): that child turn's id. */
  readonly turn?: string;
  /** The decision; null for a cancel, or for a decision row that cannot be read (it decides nothing). */
  readonly decision: ApprovalDecision | null;
  /** Why the turn was cancelled (cancels only). */
  readonly reason: string | null;
  /** `pending` until a worker takes it; then `applied`, or `ignored` when it came too late or decided nothing. */
  readonly status: 'pending' | 'applied' | 'ignored';
  /** When it was received (ISO 8601). */
  readonly createdAt: string;
  /** When a worker applied or ignored it (ISO 8601), or null while pending. */
  readonly appliedAt: string | null;
}

/** One call in the tool journal: started (a tool began), finished (its result is written). */
export interface JournalEntry {
  /** The call's id (a child turn's call: its id in that child turn). */
  readonly callId: string;
  /** For a call of a child turn (docs/agents.md): that child turn's id (`<turn id>/<transfer_task call id>`). */
  readonly turn?: string;
  readonly name: string;
  readonly startedAt: string | null;
  readonly finishedAt: string | null;
  readonly result: ToolResult | null;
}

/** A turn as `store.get` reads it. Times are ISO 8601 strings. */
export interface StoredTurn {
  /** The turn's id. */
  readonly id: string;
  /** The agent that runs it (`SubmitOptions.agent`). */
  readonly agent: string;
  /** The thread the turn belongs to, or null. */
  readonly thread: string | null;
  /** Where the turn is (core's status, or `failed` when the store failed it). */
  readonly status: StoredStatus;
  /** The input it was submitted with, or null. */
  readonly input: string | null;
  /** The last written state; null before a worker first took the turn, or when the stored state cannot be read (see `error`). */
  readonly state: TurnState | null;
  /**
   * This turn's messages as written so far (the agent's system prompt is not stored: it is code).
   * A compaction leaves them all here: it only changes what later model requests carry.
   */
  readonly transcript: readonly Message[];
  /**
   * Parked calls with no decision yet (neither applied nor waiting in the inbox). Each has `call`, as
   * the model sent it, and `input`, the input that runs if it is approved: show `input`.
   */
  readonly parked: readonly ParkedCall[];
  /** Every decision and cancel received, in order. */
  readonly decisions: readonly InboxEntry[];
  /** The tool journal: every call started, and its result once written (a child turn's calls name it in `turn`). */
  readonly toolCalls: readonly JournalEntry[];
  /**
   * A turn of many agents (docs/agents.md): its child turns (`transfer_task`), oldest first, each
   * with its agent path and transcript. Absent for a turn with none. A child is kept inside its
   * parent's state, not as a row of its own (docs/durable-turns.md, "Many agents").
   */
  readonly children?: readonly StoredChildTurn[];
  /** How the turn ended, or null while it has not. */
  readonly outcome: Outcome | null;
  /** Why the store failed the turn (unknown agent, unreadable state), else the outcome's error, else null. */
  readonly error: TurnError | null;
  /** When it was submitted. */
  readonly createdAt: string;
  /** When it last changed. */
  readonly updatedAt: string;
  /** When it ended, or null. */
  readonly endedAt: string | null;
}

/** A child turn of a stored turn of many agents, as `store.get` reads it. */
export interface StoredChildTurn {
  /** The child turn's id: `<parent id>/<transfer_task call id>`. */
  readonly id: string;
  /** The agents from the root turn's to this child's (`['supervisor', 'researcher']`). */
  readonly agentPath: readonly string[];
  /** The child turn's messages (its agent's system prompt is code: not stored). */
  readonly transcript: readonly Message[];
}

/**
 * What a child turn of a stored turn writes to its root turn's log: a message, a notice, the
 * transcript a compaction kept, the grants it remembers now, or its agent's dispatcher budget
 * counts now (docs/agents.md). One of the five. The root turn writes one kind too: the budget
 * counts of an agent it handed off to (`turn` is then the root turn's own id; no child turn).
 */
export interface ChildLogEntry {
  /** The child turn's id (`<parent id>/<call id>`), or the root turn's own id for a root-level handoff agent's counts. */
  readonly turn: string;
  /** The agents from the root turn's to the one that wrote it. */
  readonly agentPath: readonly string[];
  /** A message of the child's transcript (one of the five fields is set). */
  readonly message?: Message;
  /** A notice of the child turn. */
  readonly notice?: Notice;
  /** What the child agent's compaction kept of its transcript. */
  readonly compaction?: readonly Message[];
  /** The grants the child turn holds from now on (remembered for its calls only). */
  readonly grants?: readonly Grant[];
  /**
   * The calls the dispatcher of the agent that wrote it (the last of `agentPath`) has run in this
   * turn (`turn`) so far, as `dispatcher.budgetUsage()` gives them: a later activation's dispatcher
   * for that agent in that turn starts from them, so its `budget` holds across activations.
   */
  readonly budgetUsage?: BudgetUsage;
}

/** A turn as `store.list` lists it. */
export interface TurnSummary {
  /** The turn's id. */
  readonly id: string;
  /** The agent that runs it. */
  readonly agent: string;
  /** The thread the turn belongs to, or null. */
  readonly thread: string | null;
  /** Where the turn is. */
  readonly status: StoredStatus;
  /** When it was submitted (ISO 8601). */
  readonly createdAt: string;
  /** When it last changed (ISO 8601). */
  readonly updatedAt: string;
}

/** A thread as `store.get({ thread })` reads it. Times are ISO 8601 strings. */
export interface StoredThread {
  /** The thread's id. */
  readonly id: string;
  /** The agent of its turns. */
  readonly agent: string;
  /** `open` takes turns; `closed` takes none (`store.closeThread`). */
  readonly status: 'open' | 'closed';
  /** Its turns, oldest first. */
  readonly turns: readonly TurnSummary[];
  /**
   * The conversation its next model request starts from: the latest compaction's transcript and
   * every message written after it (all of them when nothing was compacted). The system prompt is not stored.
   */
  readonly transcript: readonly Message[];
  /** The turn that has not ended yet and runs first (running, parked or next in line), or null. */
  readonly current: string | null;
  /** The calls of `current` parked for a decision (as `StoredTurn.parked`). */
  readonly parked: readonly ParkedCall[];
  /** What its turns remembered (`remember: 'session' | 'tool'`); they apply to its later turns only. Empty once closed. */
  readonly grants: readonly Grant[];
  /** Why it was closed, or null. */
  readonly closeReason: string | null;
  /** When its first turn was submitted. */
  readonly createdAt: string;
  /** When it was closed, or null. */
  readonly closedAt: string | null;
}

/** A thread as `listThreads` lists it (times are ISO 8601 strings). */
export interface ThreadSummary {
  /** The thread's id. */
  readonly id: string;
  /** The agent of its turns. */
  readonly agent: string;
  /** `open` takes turns; `closed` takes none. */
  readonly status: 'open' | 'closed';
  /** How many turns it has. */
  readonly turns: number;
  /** Its turn that has not ended and runs first, or null. */
  readonly current: string | null;
  /** When its first turn was submitted. */
  readonly createdAt: string;
  /** When it was closed, or null. */
  readonly closedAt: string | null;
}

/** One page of `listThreads`. */
export interface ThreadPage {
  /** The threads of this page. */
  readonly threads: readonly ThreadSummary[];
  /** Pass to `listThreads` for the next page; null on the last page. */
  readonly cursor: string | null;
}

export interface ListOptions {
  readonly status?: StoredStatus;
  /** Default 50, at most 1000. */
  readonly limit?: number;
  /** The `cursor` of the previous page. */
  readonly cursor?: string | null;
}

export interface TurnPage {
  readonly turns: readonly TurnSummary[];
  /** Pass to `list` for the next page; null on the last page. */
  readonly cursor: string | null;
}

/** What `decide` stored: every call id given (a request with any call it cannot take throws and stores nothing). */
export interface DecideResult {
  /** The call ids decided, in the order given. */
  readonly accepted: readonly string[];
  /** Always empty: a call with a decision already makes `decide` throw CallAlreadyDecidedError. Kept so callers reading it keep working. */
  readonly ignored: readonly string[];
}

/** What happens to a turn, in the order it was written. `seq` counts from 1 per turn. */
export type WatchEvent =
  | { readonly type: 'message'; readonly seq: number; readonly message: Message; readonly child?: WatchChild }
  | { readonly type: 'notice'; readonly seq: number; readonly notice: Notice; readonly child?: WatchChild }
  | { readonly type: 'status'; readonly seq: number; readonly status: StoredStatus; readonly outcome: Outcome | null };

/** On a watch event of a child turn (docs/agents.md): which child turn, and the path of agents to it. */
export interface WatchChild {
  /** The child turn's id. */
  readonly turn: string;
  /** The agents from the root turn's to the one that wrote it. */
  readonly agentPath: readonly string[];
}

/** What happens in a thread: each of its turns' events, in order, with the turn's id. */
export type ThreadWatchEvent = WatchEvent & { readonly turnId: string };

export interface WatchOptions {
  /** Start after this `seq` (default 0: the whole history, then what follows). */
  readonly after?: number;
  /** How often to look for new rows. Default 200. */
  readonly pollMs?: number;
  readonly signal?: AbortSignal;
}

// ---------------------------------------------------------------------------------------------
// Under a lease: one writer per turn, and every write carries the lease's token.

/** A worker's hold on one turn. `version` moves forward with each write (compare-and-swap). */
export interface Lease {
  readonly id: string;
  readonly owner: string;
  readonly token: number;
  version: number;
  status: StoredStatus;
}

/** A pending inbox row, as a worker reads it. */
export interface PendingInbox {
  readonly inboxId: string;
  readonly kind: 'decision' | 'cancel';
  readonly callId: string | null;
  readonly decision: unknown;
  readonly reason: string | null;
}

/** A claimed turn: everything a worker needs to run it. `state` is raw (parse it with parseTurnState). */
export interface Claim {
  readonly lease: Lease;
  readonly agent: string;
  readonly input: string | null;
  readonly limits: TurnLimitsInput | null;
  readonly state: unknown;
  readonly grants: readonly Grant[];
  readonly budgetUsage: BudgetUsage | null;
  /**
   * The conversation the turn goes on from: its own messages, after its thread's context (the
   * latest compaction's transcript and every message since) for a turn of a thread.
   */
  readonly transcript: readonly Message[];
  /** The turn's thread, or null. Its grants are in `grants`. */
  readonly thread?: string | null;
  /** What the last activation's observer saved (`AgentDefinition.observe`), as read back: untrusted; null when none. */
  readonly traceContext: unknown;
  /** The turn's pending inbox rows when it was claimed (a store answers the worker's first inbox read with them). */
  readonly pending: readonly PendingInbox[];
  /** The database's clock when the turn was claimed (epoch ms): the worker keeps a turn's time by it (approval deadlines). */
  readonly now?: number;
}

/**
 * A message, a notice, a compaction or a status of a commit's `log`. A compaction is the transcript
 * the agent's `compact` kept (without the system prompt), placed after the messages appended before
 * it: written as a log entry, nothing is deleted. A status is one the turn passed through inside
 * the commit (a state the worker deferred to a later write, which wrote a newer one): logged as a
 * status change when it differs from the status before it.
 */
export type LogItem =
  | { readonly message: Message }
  | { readonly notice: Notice }
  | { readonly compaction: readonly Message[] }
  | { readonly child: ChildLogEntry }
  | { readonly status: StoredStatus };

/** One write: state, the messages and notices since the last write, and inbox rows applied. */

export interface Commit {
  readonly state?: TurnState;
  readonly messages?: readonly Message[];
  readonly notices?: readonly Notice[];
  /**
   * The messages and notices in the order the turn made them, written in that order (a reader's
   * timeline then shows "turn started" before the model's reply). When given, `messages` and
   * `notices` are not used.
   */
  readonly log?: readonly LogItem[];
  /** Inbox rows whose effect `state` includes: marked applied in the same transaction. */
  readonly applied?: readonly string[];
  /** Of `applied`, the decision rows core did not take (`decisionsTaken`): marked ignored instead. */
  readonly ignored?: readonly string[];
  readonly grants?: readonly Grant[];
  /** A turn of a thread: the grants its thread keeps from now on (given when they changed). Ignored once the thread is closed. */
  readonly threadGrants?: readonly Grant[];
  readonly budgetUsage?: BudgetUsage;
  /** The store fails the turn (state is left as stored). */
  readonly fail?: TurnError;
  /** Give the turn back: it becomes claimable again only if there is something to do. */
  readonly release?: boolean;
  /** With `release`: the turn waits in the database this long (a model call's retry backoff) before any worker may take it. */
  readonly retryAfterMs?: number;
  /** JSON text the activation's observer asks to keep with the turn (its trace context), for the next activation. */
  readonly traceContext?: string;
  /**
   * A call of the batch `state` runs, journaled as started in the same statement (only if the state
   * is written): the state before a batch rides on the batch's first call's start.
   */
  readonly start?: { readonly id: string; readonly name: string };
}

export interface ClaimOptions {
  readonly owner: string;
  readonly leaseMs: number;
  /** Claim only these turns (default: any runnable turn). */
  readonly turnIds?: readonly string[];
}

export interface ClaimManyOptions extends ClaimOptions {
  /** At most this many turns (the worker's free capacity). */
  readonly limit: number;
  /** At most this many turns of an agent held at once, counted across every worker of the database. */
  readonly caps?: Readonly<Record<string, number>>;
}

/** What the journal knows of some calls: results written, and calls started without a result. */
export interface JournalRead {
  readonly results: ToolResult[];
  readonly started: string[];
}
