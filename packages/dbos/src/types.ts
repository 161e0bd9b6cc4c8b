// The options of `createDbosTurns` and what it returns.

import type { AgentDefinition, StoreClient } from '@turnkit/store';

/** The store's client API over turns that run as DBOS workflows (`kind` is `postgres`: DBOS runs on Postgres only). */
export interface DbosTurnsClient extends StoreClient {
  /** Whether this process runs turns (it was given agents), or is a client of processes that do. */
  readonly runsTurns: boolean;
}

/**
 * The options of `createDbosTurns`: the Postgres database, and the agents this process runs (without them it is only a
 * client).
 */
export interface DbosTurnsOptions {
  /**
   * The agents this process runs turns of: with agents, DBOS is launched here (one per process)
   * and runs the turns submitted here, the turns on the queue, and, at launch, the turns a stopped
   * process of the same `executorId` left unfinished. Without, this process is only a client (a
   * server, the CLI) of processes that run them.
   */
  readonly agents?: { readonly [name: string]: AgentDefinition };
  /** The Postgres database DBOS keeps its system tables in; the adapter's tables go in `schema` there. */
  readonly databaseUrl: string;
  /** The schema of the adapter's tables. Default `turnkit_dbos`. */
  readonly schema?: string;
  /** DBOS's application name (it scopes workflows and queues in the database). Default `turnkit`. */
  readonly applicationName?: string;
  /**
   * DBOS's application version: a process recovers and dequeues only workflows of its own version.
   * Default `turnkit-dbos-1`; change it when a deploy changes what a turn does (DBOS then lets
   * the old version's processes finish the old turns).
   */
  readonly applicationVersion?: string;
  /** DBOS's executor id: a process launched with a stopped process's id recovers that one's turns. Default `local`. */
  readonly executorId?: string;
  /** How often a process that runs turns looks for turns other processes queued (ms). Default 1000. */
  readonly queuePollMs?: number;
  /** Turns this process runs at once from the queue (a parked turn counts, and one waiting behind its thread). Default: no limit. */
  readonly concurrency?: number;
  /** How often a running model call or tool batch looks for a cancel (ms). Default 200. */
  readonly cancelPollMs?: number;
  /** DBOS's log level (`error`, `warn`, `info`, `debug`). Default `warn`. */
  readonly logLevel?: string;
}
