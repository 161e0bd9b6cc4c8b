// `@turnkit/store/internal`: the store's plumbing, for turnkit's own packages and tests (the CLI,
// the bench, the model check): a store over a connection the caller also queries, the encoding
// of a stored state, and the read of a thread's context (what a claim of its next turn reads).
// Not for applications: use `openStore` and `createWorker`.

export { createStore, OPEN_RETRY_MS, openSql } from './open.js';
export type { Sql, SqlQuery } from './db/types.js';
export { restoredState, storedState } from './sql/values.js';
export { readThreadContext } from './sql/thread-context.js';
