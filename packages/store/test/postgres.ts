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

/** A Postgres server of a test file's own (see ownPostgres). */
export interface OwnPostgres {
  /** Its URL (database `postgres`). */
  readonly url: string;
  /** Restarts it (fast shutdown: connections are cut, as in a crash or a failover); returns how long it was down, in ms. */
  restart(): Promise<number>;
  /** Stops it and removes its data directory. */
  stop(): Promise<void>;
}

/**
 * Starts a Postgres server of this test file's own: a new cluster (initdb) in a temporary directory,
 * on a free port of 127.0.0.1, made with the binaries of TURNKIT_TEST_POSTGRES_URL's server (which
 * must be on this machine), as the `postgres` user when this process is root. For a test that
 * restarts its server: restarting the shared one would cut every other test file's connections.
 */
export async function ownPostgres(): Promise<OwnPostgres> {
  const { execFileSync } = await import('node:child_process');
  const { mkdtempSync, rmSync } = await import('node:fs');
  const { createServer } = await import('node:net');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const { Pool } = (await import('pg')).default;
  const pool = new Pool({ connectionString: POSTGRES_URL, max: 1 });
  let binDir: string;
  try {
    binDir = String((await pool.query(`SELECT setting FROM pg_config WHERE name = 'BINDIR'`)).rows[0]?.setting);
  } finally {
    await pool.end();
  }
  const port = await new Promise<number>((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0));
    });
  });
  const dir = mkdtempSync(join(tmpdir(), 'turnkit-own-postgres-'));
  const data = join(dir, 'data');
  const asRoot = process.getuid?.() === 0;
  if (asRoot) execFileSync('chown', ['postgres:postgres', dir]);
  const run = (program: string, args: readonly string[]): void => {
    execFileSync(
      asRoot ? 'runuser' : `${binDir}/${program}`,
      asRoot ? ['-u', 'postgres', '--', `${binDir}/${program}`, ...args] : args,
      {
        stdio: 'ignore',
        timeout: 60_000,
      },
    );
  };
  run('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync']);
  const options = `-c listen_addresses=127.0.0.1 -c port=${port} -c unix_socket_directories=${dir}`;
  run('pg_ctl', ['-D', data, '-l', join(dir, 'server.log'), '-o', options, '-w', 'start']);
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async restart() {
      const started = Date.now();
      run('pg_ctl', ['-D', data, '-l', join(dir, 'server.log'), '-m', 'fast', '-w', 'restart']);
      return Date.now() - started;
    },
    async stop() {
      try {
        run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
