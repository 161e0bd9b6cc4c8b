// `createDbosTurns`: the store's client API over turns that run as DBOS workflows. With agents, this
// process launches DBOS and runs turns; without, it is a client of the processes that do.

import { DBOS, DBOSClient } from '@dbos-inc/dbos-sdk';
import pg from 'pg';
import { createClient } from './client.js';
import { checkSchema, migrate } from './schema.js';
import type { DbosTurnsClient, DbosTurnsOptions } from './types.js';
import { runTurnWorkflow, setRuntime } from './workflow.js';

/** The workflow's name in DBOS, and the queue processes that run turns take queued ones from. */
export const WORKFLOW_NAME = 'turnkit.turn';
export const QUEUE_NAME = 'turnkit';

/** The registered workflow (DBOS registers a function once per process, before launch). */
let workflow: ((id: string) => Promise<void>) | null = null;
/** Whether this process's DBOS runs turns now (DBOS is one per process). */
let launched = false;

function positive(value: unknown, name: string, fallback: number | undefined): number | undefined {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0)
    throw new RangeError(`createDbosTurns option \`${name}\` must be a positive number, got ${String(value)}.`);
  return value;
}

function checkOptions(options: DbosTurnsOptions): void {
  if (options === null || typeof options !== 'object')
    throw new TypeError('createDbosTurns needs { databaseUrl, agents?, schema?, ... }.');
  if (typeof options.databaseUrl !== 'string' || !/^postgres(ql)?:\/\//.test(options.databaseUrl))
    throw new TypeError(
      'createDbosTurns option `databaseUrl` must be a postgres:// URL (DBOS runs on Postgres only; PGlite cannot hold its connections).',
    );
  const { agents } = options;
  if (agents === undefined) return;
  if (agents === null || typeof agents !== 'object' || Array.isArray(agents))
    throw new TypeError('createDbosTurns option `agents` must be an object of agents by name.');
  for (const [name, agent] of Object.entries(agents)) {
    // What a DBOS process cannot honour is refused, not ignored.
    if (agent.maxRunning !== undefined)
      throw new TypeError(
        `Agent '${name}': \`maxRunning\` is a store worker's cap; on DBOS, limit turns with createDbosTurns({ concurrency }) per process.`,
      );
    if (agent.observe !== undefined)
      throw new TypeError(`Agent '${name}': \`observe\` (activation observers) is not supported on DBOS; remove it.`);
  }
}

/**
 * Opens turns on DBOS: creates the adapter's tables if needed, and with `agents` launches DBOS in
 * this process (one per process) to run turns. Returns the store's client API (`@turnkit/server`
 * and the CLI's store commands take it as they take a store); `close()` stops DBOS (turns in
 * flight are recovered by the next process launched with the same `executorId`).
 *
 * @example
 * const turns = await createDbosTurns({ agents: { support }, databaseUrl: 'postgres://…/app' });
 * const id = await turns.submit({ agent: 'support', input: 'Where is my order?' });
 */
export async function createDbosTurns(options: DbosTurnsOptions): Promise<DbosTurnsClient> {
  checkOptions(options);
  const schema = checkSchema(options.schema ?? 'turnkit_dbos');
  const applicationName = options.applicationName ?? 'turnkit';
  const appVersion = options.applicationVersion ?? 'turnkit-dbos-1';
  const queuePollMs = positive(options.queuePollMs, 'queuePollMs', 1000) as number;
  const cancelPollMs = positive(options.cancelPollMs, 'cancelPollMs', 200) as number;
  const concurrency = positive(options.concurrency, 'concurrency', undefined);
  const runs = options.agents !== undefined;
  if (runs && launched)
    throw new Error(
      'createDbosTurns: this process runs turns already (DBOS is one per process); close the other one first, or pass no agents for a client.',
    );

  const pool = new pg.Pool({ connectionString: options.databaseUrl, max: 10 });
  pool.on('error', () => undefined); // an idle connection dropped: the next query opens another
  let dbos: DBOSClient | null = null;
  try {
    await migrate(pool, schema);
    if (runs) {
      DBOS.setConfig({
        name: applicationName,
        systemDatabaseUrl: options.databaseUrl,
        applicationVersion: appVersion,
        logLevel: options.logLevel ?? 'warn',
        ...(options.executorId === undefined ? {} : { executorID: options.executorId }),
      });
      workflow ??= DBOS.registerWorkflow(runTurnWorkflow, { name: WORKFLOW_NAME });
      setRuntime({ pool, schema, agents: options.agents ?? {}, cancelPollMs });
      launched = true;
      await DBOS.launch();
      await DBOS.registerQueue(QUEUE_NAME, {
        minPollingIntervalMs: queuePollMs,
        ...(concurrency === undefined ? {} : { workerConcurrency: concurrency }),
        onConflict: 'always_update',
      });
    }
    dbos = await DBOSClient.create({ systemDatabaseUrl: options.databaseUrl, applicationName });
  } catch (error) {
    if (runs && launched) {
      launched = false;
      setRuntime(null);
      await DBOS.shutdown().catch(() => undefined);
    }
    await pool.end().catch(() => undefined);
    throw error;
  }
  const client = dbos;
  const started = workflow as (id: string) => Promise<void>;
  const api = createClient({
    pool,
    schema,
    dbos: client,
    // Here: the workflow starts once the submit has committed (a turn left `ready` with no
    // workflow, its process stopped in between, is started at the next launch). Elsewhere: the
    // turn goes on the queue in the submit's transaction, for a process that runs turns.
    start: async (tx, id) => {
      if (runs)
        return async () => {
          await DBOS.startWorkflow(started, { workflowID: id })(id);
        };
      await client.enqueueInTransaction(
        tx,
        { queueName: QUEUE_NAME, workflowName: WORKFLOW_NAME, workflowID: id, appVersion },
        id,
      );
      return null;
    },
  });
  if (runs) await startOrphans(pool, schema, started);
  let closed = false;
  return {
    ...api,
    runsTurns: runs,
    async close() {
      if (closed) return;
      closed = true;
      if (runs) {
        await DBOS.shutdown();
        setRuntime(null);
        launched = false;
      }
      await client.destroy().catch(() => undefined);
      await pool.end();
    },
  };
}

/** Starts the workflows of turns submitted here whose process stopped between the submit and the start. */
async function startOrphans(pool: pg.Pool, schema: string, started: (id: string) => Promise<void>): Promise<void> {
  const { rows } = await pool.query(
    `SELECT t.id FROM ${schema}.turns t WHERE t.status = 'ready' AND NOT EXISTS (SELECT 1 FROM dbos.workflow_status w WHERE w.workflow_uuid = t.id)`,
  );
  for (const r of rows) await DBOS.startWorkflow(started, { workflowID: String(r.id) })(String(r.id));
}
