export { openStore, createStore, LeaseLostError, ConflictError } from './store.js';
export type { OpenStoreOptions, Store } from './store.js';
export { createWorker } from './worker.js';
export type { AgentDefinition, Worker, WorkerOptions } from './worker.js';
export { MIGRATIONS, SCHEMA_VERSION, migrate } from './schema.js';
export { lockPath, loadDriver } from './sql.js';
export type { ModuleLoader, Row, Sql, SqlQuery } from './sql.js';
export type * from './types.js';
