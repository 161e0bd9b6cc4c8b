// The real Postgres the DBOS tests use, when TURNKIT_TEST_POSTGRES_URL names one (.ci/run starts
// it). DBOS keeps its system tables in the schema `dbos` of its database and recovers, at
// launch, every unfinished workflow of its executor in that database: each test file gets a fresh
// database on that server (named after the file, the process and the time), so files and runs at
// once never recover each other's turns.

import pg from 'pg';

export const POSTGRES_URL: string | undefined = process.env.TURNKIT_TEST_POSTGRES_URL || undefined;

export const WHY_SKIPPED = 'TURNKIT_TEST_POSTGRES_URL is not set; .ci/run starts a Postgres and sets it';

/**
 * A fresh database on the test server, named after `what`, this process and the time (two runs at
 * once, in two checkouts, never share one); its URL.
 */
export async function freshDatabase(what: string): Promise<string> {
  if (POSTGRES_URL === undefined) throw new Error(WHY_SKIPPED);
  const database = `turnkit_dbos_${what}_${process.pid}_${Date.now().toString(36)}`;
  await admin(`CREATE DATABASE ${database}`);
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${database}`;
  return url.toString();
}

/** Drops a database `freshDatabase` made (its URL; connections still open are ended). */
export async function dropDatabase(url: string | undefined): Promise<void> {
  if (POSTGRES_URL === undefined || url === undefined) return;
  const database = new URL(url).pathname.slice(1);
  if (!/^turnkit_dbos_[a-z0-9_]+$/.test(database)) throw new Error(`not a test database: ${database}`);
  await admin(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
}

async function admin(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}
