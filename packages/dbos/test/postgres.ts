// The real Postgres the DBOS tests use, when TURNKIT_TEST_POSTGRES_URL names one (.ci/run starts
// it). DBOS keeps its system tables in a database of their own schema (`dbos`) and recovers, at
// launch, every unfinished workflow of its executor in that database: each test file gets a fresh
// database of its own on that server, so files running at once never recover each other's turns.

import pg from 'pg';

export const POSTGRES_URL: string | undefined = process.env.TURNKIT_TEST_POSTGRES_URL || undefined;

export const WHY_SKIPPED = 'TURNKIT_TEST_POSTGRES_URL is not set; .ci/run starts a Postgres and sets it';

/** A fresh database `turnkit_dbos_<name>` on the test server (dropped first if a run left one); its URL. */
export async function freshDatabase(name: string): Promise<string> {
  if (POSTGRES_URL === undefined) throw new Error(WHY_SKIPPED);
  const database = `turnkit_dbos_${name}`;
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await admin.query(`CREATE DATABASE ${database}`);
  } finally {
    await admin.end();
  }
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${database}`;
  return url.toString();
}

/** Drops a database `freshDatabase` made. */
export async function dropDatabase(name: string): Promise<void> {
  if (POSTGRES_URL === undefined) return;
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS turnkit_dbos_${name} WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}
