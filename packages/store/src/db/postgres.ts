// A real Postgres through `pg`: a pool of connections, and LISTEN on a connection of its own.

import { createHash } from 'node:crypto';
import { loadDriver } from './driver.js';
import { listenPostgres, type ClientFactory } from './notify.js';
import type { ModuleLoader, Row, Sql } from './types.js';

/** A statement for `pg`: one with parameters is named, so each connection parses and plans it once and reuses the plan. */
interface PgQuery {
  readonly text: string;
  readonly values?: unknown[];
  readonly name?: string;
}

const names = new Map<string, string>();

function prepared(text: string, params: readonly unknown[] | undefined): PgQuery {
  if (params === undefined || params.length === 0) return { text };
  let name = names.get(text);
  if (name === undefined) {
    name = `turnkit_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`;
    if (names.size < 1000) names.set(text, name);
  }
  return { text, values: [...params], name };
}

interface PgPoolLike {
  query(query: PgQuery | string): Promise<{ rows: Row[] }>;
  connect(): Promise<{
    query(query: PgQuery | string): Promise<{ rows: Row[] }>;
    release(error?: Error | boolean): void;
    on(event: 'error', listener: (error: Error) => void): unknown;
    off(event: 'error', listener: (error: Error) => void): unknown;
  }>;
  end(): Promise<void>;
  on(event: 'error', listener: (error: Error) => void): unknown;
}

/** Opens a pool of connections to a real Postgres through `pg`. */
export async function openPostgres(url: string, schema: string | undefined, load?: ModuleLoader): Promise<Sql> {
  type PgModule = { Pool: new (config: object) => PgPoolLike; Client: new (config: object) => ReturnType<ClientFactory> };
  const mod = (await loadDriver('pg', 'openStore("postgres://…")', load)) as Partial<PgModule> & { default?: PgModule };
  const Pool = mod.Pool ?? mod.default?.Pool;
  const Client = mod.Client ?? mod.default?.Client;
  if (Pool === undefined || Client === undefined)
    throw new Error("The installed 'pg' package has no Pool or Client export; install pg >= 8.");
  // keepAlive: a connection cut by the network (not closed by the server) is found dead, not waited on forever.
  // plan_cache_mode: each named statement is planned once per connection, for any parameters. Left
  // to choose, Postgres planned the turn's large statements (the claim, a checkpoint, a result)
  // again at every execution, which was most of its CPU for a turn: one worker process ran the
  // bench scenario in 10.8–11.0 ms a turn with it and 14.9–29.4 without, back to back (the durable
  // bench's worker, 1,000 turns each). A statement whose best plan depends on which filters are
  // given is written per filter instead (`listTurns`, `listThreads`).
  const config: { connectionString: string; max: number; keepAlive: boolean; connectionTimeoutMillis: number; options: string } =
    {
      connectionString: url,
      max: 10,
      keepAlive: true,
      connectionTimeoutMillis: 10_000,
      options: '-c plan_cache_mode=force_generic_plan',
    };
  if (schema !== undefined) {
    // Create the schema once, then every connection of the pool uses it.
    const setup = new Pool({ connectionString: url, max: 1 });
    setup.on('error', () => undefined);
    try {
      await setup.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    } finally {
      await setup.end();
    }
    config.options += ` -c search_path=${schema}`;
  }
  const pool = new Pool(config);
  // An idle connection that drops must not crash the process; the next query reconnects.
  pool.on('error', () => undefined);
  const rows = async (promise: Promise<{ rows: Row[] }>): Promise<Row[]> => (await promise).rows;
  return {
    kind: 'postgres',
    query: (text, params) => rows(pool.query(prepared(text, params))),
    async transaction(work) {
      const client = await pool.connect();
      let broken = false;
      // A connection that drops between two statements of the transaction (Postgres restarting) must
      // not crash the process: the next statement fails, and the connection is not given back.
      const dropped = (): void => {
        broken = true;
      };
      client.on('error', dropped);
      try {
        await client.query('BEGIN');
        const result = await work({
          query: (text, params) => rows(client.query(prepared(text, params))),
        });
        await client.query('COMMIT');
        return result;
      } catch (error) {
        try {
          await client.query('ROLLBACK');
        } catch {
          broken = true;
        }
        throw error;
      } finally {
        client.off('error', dropped);
        client.release(broken);
      }
    },
    close: () => pool.end(),
    listen: (channel, handlers) => listenPostgres(() => new Client(config), channel, handlers),
  };
}
