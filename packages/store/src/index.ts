// @turnkit/store: durable turns. `openStore` opens a store (its client and the lease API its
// workers use); `createWorker` runs its turns.

export { openStore } from './open.js';
export type { OpenStoreOptions, Store } from './open.js';
export type { StoreClient } from './client/types.js';
export type {
  ChildLogEntry,
  InboxEntry,
  StoredChildTurn,
  StoredStatus,
  StoredThread,
  StoredTurn,
  SubmitOptions,
  ThreadPage,
  ThreadSummary,
  ThreadWatchEvent,
  TurnSummary,
  WatchChild,
  WatchEvent,
} from './types.js';
export { STORED_STATUSES } from './statuses.js';
export { newTurnId } from './ids.js';
export {
  CallAlreadyDecidedError,
  ThreadBusyError,
  ThreadClosedError,
  ThreadNotFoundError,
  TurnExistsError,
  TurnNotFoundError,
  TurnNotWaitingError,
  UnknownCallError,
} from './errors.js';
export { createWorker } from './worker/worker.js';
export type { AgentDefinition, Worker, WorkerOptions } from './worker/types.js';
export { describeWorkerEvent } from './worker/events.js';
export type { WorkerEvent, WorkerStats } from './worker/events.js';
export type { ActivationObserver, StoredActivation } from './worker/observe.js';
