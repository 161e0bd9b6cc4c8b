// `@turnkit/store/internal`: the store's plumbing, for turnkit's own packages and tests (the CLI,
// the bench, the model check): a store over a connection the caller also queries, and the
// encoding of a stored state. Not for applications: use `openStore` and `createWorker`.

export { createStore, OPEN_RETRY_MS, openSql } from './open.js';
export type { Sql, SqlQuery } from './db/types.js';
export { restoredState, storedState } from './sql/values.js';
export { createFileOnce, isAlive } from './db/lock.js';
export { loadDriver } from './db/driver.js';
