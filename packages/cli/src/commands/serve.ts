// `turnkit serve [--store url | --dbos url]`: the HTTP API and the web console over a store
// (@turnkit/server), or over turns that run on DBOS (@turnkit/dbos, the same client API). It runs
// no agents: workers (your code, with `createWorker` or `createDbosTurns({ agents })`) run the
// turns; serve shows them and takes decisions and cancels. Stops on SIGINT or SIGTERM.

import { type Command, InvalidArgumentError } from 'commander';
import { UsageError } from '../errors.js';
import { openDbos } from './store-common.js';

/** Named here too: the help must not load @turnkit/server (an optional peer) to print it. */
const TOKEN_ENV = 'TURNKIT_SERVER_TOKEN';
const INSTALL = 'npm i @turnkit/server @turnkit/store @electric-sql/pglite (or pg for Postgres)';

/**
 * @turnkit/server and @turnkit/store are optional peers (a web server and a database driver are
 * more than `turnkit run` needs): loaded when `serve` runs, with a message that says what to install.
 */
export async function loadServer(command = 'turnkit serve') {
  try {
    return { ...(await import('@turnkit/server')), ...(await import('@turnkit/store')) };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ERR_MODULE_NOT_FOUND' && /@turnkit\/(server|store)/.test(String(error)))
      throw new UsageError(`${command} needs @turnkit/server and @turnkit/store next to @turnkit/cli: ${INSTALL}.`);
    throw error;
  }
}

/** A URL without its password, to print. */
function withoutPassword(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.toString();
  } catch {
    return url;
  }
}

export interface ServeFlags {
  readonly store?: string;
  readonly dbos?: string;
  readonly host: string;
  readonly port: number;
  readonly tokenFile: string;
}

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|localhost)$/;

/** Serves until SIGINT or SIGTERM; resolves to the exit code. */
export async function serveCommand(flags: ServeFlags): Promise<number> {
  const { loadToken, openStore, serve } = await loadServer();
  let token: Awaited<ReturnType<typeof loadToken>>;
  try {
    token = await loadToken({ file: flags.tokenFile });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  if (flags.store !== undefined && flags.dbos !== undefined)
    throw new UsageError('turnkit serve takes --store or --dbos, not both: one place the turns are.');
  const store =
    flags.dbos !== undefined
      ? await openDbos(flags.dbos)
      : await openStore(flags.store).catch((error: unknown) => {
          // A URL openStore does not know, or a missing driver package: the user's to fix.
          throw error instanceof TypeError ? new UsageError(error.message) : error;
        });
  const server = await serve({ store, token: token.check, host: flags.host, port: flags.port }).catch(async (error: unknown) => {
    await store.close();
    throw new UsageError(
      `cannot listen on ${flags.host}:${flags.port}: ${error instanceof Error ? error.message : String(error)}`,
    );
  });
  const out = process.stdout;
  out.write(`turnkit serve: console ${server.url}/console · API ${server.url}/api (OpenAPI: ${server.url}/api/openapi.json)\n`);
  out.write(
    flags.dbos !== undefined
      ? `turns on DBOS: ${withoutPassword(flags.dbos)}\n`
      : `store: ${flags.store ?? './.turnkit (PGlite)'}\n`,
  );
  if (token.created !== null) {
    out.write(`token (shown this once; only its hash is kept, in ${flags.tokenFile}):\n  ${token.created}\n`);
  } else {
    out.write(
      token.source === 'env' ? `token: from ${TOKEN_ENV}\n` : `token: the one made on first start (hash in ${flags.tokenFile})\n`,
    );
  }
  if (!LOOPBACK.test(flags.host))
    process.stderr.write(`turnkit serve: listening on ${flags.host}, not only this machine: put TLS in front of it.\n`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await server.close();
  await store.close();
  return 0;
}

export function port(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n > 65_535) throw new InvalidArgumentError('Expected a port from 0 to 65535 (0 picks a free one).');
  return n;
}

/** Adds `serve` to the program. */
export function addServeCommand(
  program: Command,
  configure: (command: Command) => Command,
  setExit: (code: number) => void,
): void {
  configure(program.command('serve'))
    .description('Serve the HTTP API and the web console for the turns in a store (or on DBOS).')
    .option('--store <url>', "the store: 'postgres://…', a PGlite directory, or 'memory://' (default ./.turnkit)")
    .option('--dbos <url>', 'turns that run on DBOS (@turnkit/dbos): the postgres:// URL of the database DBOS runs on')
    .option('--host <host>', 'the address to listen on', '127.0.0.1')
    .option('--port <port>', 'the port to listen on (0 picks a free one)', port, 4700)
    .option(
      '--token-file <file>',
      `where the hash of a generated token is kept (unless ${TOKEN_ENV} is set)`,
      '.turnkit-server-token',
    )
    .addHelpText(
      'after',
      [
        '',
        'Examples:',
        '  $ turnkit serve --store postgres://localhost/turnkit',
        '  $ turnkit serve --dbos postgres://localhost/app',
        `  $ ${TOKEN_ENV}=$(openssl rand -base64 32) turnkit serve --port 8080`,
        '',
        `The token: ${TOKEN_ENV}, or one generated on first start and printed once. Send it as`,
        '`Authorization: Bearer <token>`; the console asks for it once and keeps a session cookie.',
      ].join('\n'),
    )
    .action(async (flags: ServeFlags) => setExit(await serveCommand(flags)));
}
