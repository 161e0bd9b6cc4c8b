export {
  openStore,
  openSql,
  createStore,
  LeaseLostError,
  ConflictError,
  TurnExistsError,
  TurnNotFoundError,
  TurnNotWaitingError,
  UnknownCallError,
  CallAlreadyDecidedError,
} from './store.js';
export type { OpenStoreOptions, Store } from './store.js';
export { createWorker } from './worker.js';
export type { AgentDefinition, Worker, WorkerOptions } from './worker.js';
export { describeWorkerEvent } from './worker-events.js';
export type { WorkerEvent, WorkerObserver, WorkerStats } from './worker-events.js';
export type { Departure } from './run-turn.js';
export { MAX_TRACE_CONTEXT } from './observe.js';
export type { ActivationObserver, ActivationStatus, StoredActivation } from './observe.js';
export type { ListenHandlers } from './notify.js';
export { STORED_STATUSES } from './columns.js';
export { newTurnId } from './ids.js';
export { CRASH_ENV, CRASH_POINTS } from './crash.js';
export type { CrashPoint } from './crash.js';
export { MIGRATIONS, SCHEMA_VERSION, migrate } from './schema.js';
export { OPEN_RETRY_MS } from './store.js';
export { lockPath, loadDriver } from './sql.js';
export type { ModuleLoader, Row, Sql, SqlQuery } from './sql.js';
export type * from './types.js';
