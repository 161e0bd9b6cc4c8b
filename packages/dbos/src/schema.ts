// The tables the DBOS adapter keeps beside DBOS's own, in one schema of the DBOS system database (so
// a decision's inbox row and its DBOS message commit in one transaction): the turns (what `get` and
// `list` read), their log (messages, notices and status changes, what `watch` reads), the inbox
// (decisions and cancels, as received and whether the turn took them), the tool journal (each
// call started before its tool runs, and its result), and the threads (a conversation's agent, the
// grants its turns remembered, whether it is closed; its turns name it, and run in `seq` order).

import type pg from 'pg';

const IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;

/** Checks a schema name (it is put into SQL as is); returns it. */
export function checkSchema(schema: unknown): string {
  if (typeof schema !== 'string' || !IDENTIFIER.test(schema))
    throw new TypeError(
      `createDbosTurns option \`schema\` must be a lower-case SQL identifier (letters, digits, _; at most 63), got ${JSON.stringify(schema)}.`,
    );
  return schema;
}

/** The statements that create the tables in `s` (each is a no-op when its table exists). */
export function schemaSql(s: string): string[] {
  return [
    `CREATE SCHEMA IF NOT EXISTS ${s}`,
    `CREATE TABLE IF NOT EXISTS ${s}.turns (
      seq bigserial UNIQUE,
      id text PRIMARY KEY,
      agent text NOT NULL,
      input text,
      limits jsonb,
      status text NOT NULL DEFAULT 'ready',
      state jsonb,
      error jsonb,
      log_seq bigint NOT NULL DEFAULT 0,
      version bigint NOT NULL DEFAULT 0,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      ended_at timestamptz
    )`,
    `ALTER TABLE ${s}.turns ADD COLUMN IF NOT EXISTS thread text`,
    `CREATE INDEX IF NOT EXISTS turns_thread ON ${s}.turns (thread, seq) WHERE thread IS NOT NULL`,
    `CREATE TABLE IF NOT EXISTS ${s}.threads (
      id text PRIMARY KEY,
      agent text NOT NULL,
      grants jsonb NOT NULL DEFAULT '[]',
      close_reason text,
      created_at timestamptz NOT NULL DEFAULT now(),
      closed_at timestamptz
    )`,
    `CREATE TABLE IF NOT EXISTS ${s}.log (
      turn_id text NOT NULL,
      seq bigint NOT NULL,
      kind text NOT NULL,
      data jsonb NOT NULL,
      PRIMARY KEY (turn_id, seq)
    )`,
    `CREATE TABLE IF NOT EXISTS ${s}.inbox (
      id bigserial PRIMARY KEY,
      turn_id text NOT NULL,
      kind text NOT NULL,
      call_id text,
      body jsonb,
      status text NOT NULL DEFAULT 'pending',
      created_at timestamptz NOT NULL DEFAULT now(),
      applied_at timestamptz
    )`,
    `CREATE UNIQUE INDEX IF NOT EXISTS inbox_decision ON ${s}.inbox (turn_id, call_id) WHERE kind = 'decision'`,
    `CREATE UNIQUE INDEX IF NOT EXISTS inbox_cancel ON ${s}.inbox (turn_id) WHERE kind = 'cancel'`,
    `CREATE TABLE IF NOT EXISTS ${s}.calls (
      turn_id text NOT NULL,
      call_id text NOT NULL,
      name text NOT NULL,
      started_at timestamptz,
      finished_at timestamptz,
      result jsonb,
      owner text,
      PRIMARY KEY (turn_id, call_id)
    )`,
  ];
}

/** Creates the tables, one process at a time (an advisory lock: two processes starting at once). */
export async function migrate(pool: pg.Pool, schema: string): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`turnkit_dbos:${schema}`]);
    for (const statement of schemaSql(schema)) await client.query(statement);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

/** Runs `work` in one transaction on a client of `pool`, begun with `begin` (a read-only snapshot, say). */
export async function transaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>, begin = 'BEGIN'): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query(begin);
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}
