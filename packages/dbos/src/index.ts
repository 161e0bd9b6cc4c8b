// @turnkit/dbos: durable turns on DBOS Transact. Each turn is a DBOS workflow on Postgres;
// `createDbosTurns` returns the store's client API over them.

export { createDbosTurns } from './turns.js';
export type { DbosTurnsClient, DbosTurnsOptions } from './types.js';
