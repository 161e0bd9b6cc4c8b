// `@turnkit/store/internal`: the store's plumbing, for turnkit's own packages and tests (the CLI,
// the bench, the model check). Not for applications: use `openStore` and `createWorker`.

export { createStore, OPEN_RETRY_MS, openSql } from './open.js';
export type { ModuleLoader, Row, Sql, SqlQuery } from './db/types.js';
export { lockPath } from './db/lock.js';
export { migrate } from './schema/migrate.js';
export { MIGRATIONS, SCHEMA_VERSION } from './schema/migrations.js';
export { restoredState, storedState } from './sql/values.js';
export { CRASH_ENV, CRASH_POINTS, type CrashPoint } from './crash.js';
export { ConflictError, LeaseLostError } from './errors.js';
export type { Claim, Commit, JournalRead, Lease, Leases, PendingInbox } from './worker/types.js';
