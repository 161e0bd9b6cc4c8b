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

/**
 * Restarts the Postgres server of TURNKIT_TEST_POSTGRES_URL (fast shutdown: connections are cut,
 * as in a crash or a failover), through pg_ctl on its data directory, as the `postgres` user when
 * this process is root. Returns how long Postgres was down, in ms.
 */
export async function restartPostgres(): Promise<number> {
  const { execFileSync } = await import('node:child_process');
  const { Pool } = (await import('pg')).default;
  const pool = new Pool({ connectionString: POSTGRES_URL, max: 1 });
  let dataDir: string;
  let binDir: string;
  try {
    dataDir = String((await pool.query('SHOW data_directory')).rows[0]?.data_directory);
    binDir = String((await pool.query(`SELECT setting FROM pg_config WHERE name = 'BINDIR'`)).rows[0]?.setting);
  } finally {
    await pool.end();
  }
  const pgCtl = [`${binDir}/pg_ctl`, '-D', dataDir, '-m', 'fast', '-w', 'restart'];
  const asRoot = process.getuid?.() === 0;
  const started = Date.now();
  execFileSync(asRoot ? 'runuser' : (pgCtl[0] as string), asRoot ? ['-u', 'postgres', '--', ...pgCtl] : pgCtl.slice(1), {
    stdio: 'ignore',
    timeout: 60_000,
  });
  return Date.now() - started;
}
