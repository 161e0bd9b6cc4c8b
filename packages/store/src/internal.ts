// `@turnkit/store/internal`: the store's plumbing, for turnkit's own packages and tests (the CLI,
// the bench, the model check): a store over a connection the caller also queries, the encoding
// of a stored state, and the read of a thread's context (what a claim of its next turn reads).
// Not for applications: use `openStore` and `createWorker`.

export { createStore, OPEN_RETRY_MS, openSql } from './open.js';
export type { Sql, SqlQuery } from './db/types.js';
export { restoredState, storedState } from './sql/values.js';
export { createFileOnce, isAlive } from './db/lock.js';

// What another durable engine's adapter (@turnkit/dbos) shares with the store, so its client takes
// the same options, refuses the same values and answers in the same shapes: the checks of
// `submit`, `decide` and `list`, the statuses that end a turn, the inbox's and journal's row
// readers, the thread's checks and readers (a thread takes the turn, a context folded from its
// log, its summaries), and the journal's rule for a batch re-issued after a crash (`protocolStep` on a
// `journal_read`: a result is used, a start without one is `interrupted` unless idempotent).
export { checkSubmit } from './sql/submit.js';
export { checkDecidable, checkDecisions, parkedIds } from './sql/decide.js';
export { checkList } from './sql/list-turns.js';
export { ISO, rowResult, toInboxEntry } from './sql/values.js';
export { STATUSES, STORED_STATUSES, storedStatusOf, TERMINAL } from './statuses.js';
export { newTurnId } from './ids.js';
// A tree's child log, as the DBOS adapter keeps it the store's way.
export type { ChildLogEntry } from './types.js';
// The durable protocol's decisions as a pure function, the one the worker drives
// (worker/protocol.ts): its model check in @turnkit/check/internal runs it. Loads neither pg nor PGlite.
export {
  claimable,
  claimLimit,
  journalNeedsRead,
  openHold,
  protocol,
  protocolStep,
  type ClaimingWorker,
  type ClaimRow,
  type Departure,
  type Hold,
  type InboxRow,
  type LostReason,
  type Protocol,
  type ProtocolEffect,
  type ProtocolEvent,
} from './worker/protocol.js';
export { INTERRUPTED } from './worker/tool-journal.js';
export { messageOf } from './errors.js';
export { contextOf, readThreadContext } from './sql/thread-context.js';
export { checkThreadTakes } from './sql/submit.js';
export { checkListThreads, toStoredThread, toThreadSummary } from './sql/get-thread.js';
export { toTurnSummary } from './sql/list-turns.js';
export { childTurns, readState, toJournalEntry, undecidedParked } from './sql/get-turn.js';
// The watch's rules (order, de-duplication, end, polling) over another engine's reads of its tables.
export { followTurn, type TurnLogReads } from './sql/watch.js';
export { followThread, type ThreadLogReads } from './sql/watch-thread.js';
export { loadDriver } from './db/driver.js';

// How a run of a stored agent's turn outside a worker (`turnkit run`, in the CLI's process) asks the
// agent's `observe` and reads what its observer says to keep for the next run.
export { MAX_TRACE_CONTEXT, startObserver, traceContextText } from './worker/observe.js';

// What a durable interpreter shares with the worker about an agent: what its dispatcher is made
// from, and how a compaction is kept.
export { dispatcherRules } from './worker/activation.js';
export { runStoredCompaction, uniqueGrants } from './worker/held-turn.js';

// What a durable interpreter shares with the worker about a tree of agents (docs/agents.md): the
// agents a turn reaches and their runtime tools, the driver's directory of them, and the keys a
// child turn's calls are journaled and decided under (`activeKeys` makes them, `splitKey` reads
// them); with the readers of get-turn.js above (`childTurns`, `toJournalEntry`) and `storedStatusOf`.
export { activeKeys, directory, isMultiAgent, reachable, runtimeTools, splitKey } from './worker/tree.js';
