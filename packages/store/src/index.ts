// @turnkit/store: durable turns. `openStore` opens a store (its client and the lease API its
// workers use); `createWorker` runs its turns.

export { openStore } from './open.js';
export type { Store } from './open.js';
export type { StoreClient } from './client/types.js';
export type {
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
export type { AgentDefinition, Worker } from './worker/types.js';
export { describeWorkerEvent } from './worker/events.js';
export type { WorkerEvent, WorkerStats } from './worker/events.js';
export type { StoredActivation } from './worker/observe.js';
