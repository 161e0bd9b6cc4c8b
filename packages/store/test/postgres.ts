// The real Postgres the tests use, when TURNKIT_TEST_POSTGRES_URL names one (.ci/run starts it).
// Each test file works in its own scratch schema, so files can run at once.

export const POSTGRES_URL: string | undefined = process.env.TURNKIT_TEST_POSTGRES_URL || undefined;

export const WHY_SKIPPED = 'TURNKIT_TEST_POSTGRES_URL is not set; .ci/run starts a Postgres and sets it';

export function scratchSchema(what: string): string {
  return `turnkit_test_${what}_${process.pid}_${Date.now().toString(36)}`;
}

/** Drops a scratch schema (through a store on the default schema, so `pg` stays the store's business). */
export async function dropSchema(schema: string): Promise<void> {
  if (POSTGRES_URL === undefined) return;
  const { Pool } = (await import('pg')).default;
  const pool = new Pool({ connectionString: POSTGRES_URL, max: 1 });
  try {
    await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  } finally {
    await pool.end();
  }
}
