// What the commands on stored turns share: opening the store `--store` names (or the turns on DBOS
// `--dbos` names), the options themselves, and how a stored turn is shown (the same lines for
// `turnkit run --store` and `turnkit show`).

import { existsSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { openStore, type Store, type StoreClient, type StoredTurn } from '@turnkit/store';
import { type Command, Option } from 'commander';
import { type DevLink, findDevLink, isDirectoryStore } from '../dev-link.js';
import { httpStore } from '../http-store.js';
import { oneLine, UsageError } from '../errors.js';
import { safeText, shellCommand } from '../safe-text.js';
import { EXIT } from '../turn.js';
import { messageLine } from '@turnkit/testing/internal';

/** Where stored turns live when `--store` names nothing: PGlite in ./.turnkit (as openStore()). */
export const DEFAULT_STORE = '.turnkit';

export const STORE_HELP = `where the turns are stored: a directory for PGlite (default ${DEFAULT_STORE}), memory://, or postgres://…`;

/** `--store <url>` for the commands that read or change stored turns. */
export function storeOption(): Option {
  return new Option('--store <url>', STORE_HELP).default(DEFAULT_STORE);
}

/**
 * Opens the store; a store that cannot be opened (missing driver, PGlite in use, bad URL) is one
 * line, exit 2. A command a person waits for tries a Postgres once (`retryMs` 0); `turnkit worker`
 * waits for one that is restarting (openStore's default).
 */
export async function openCliStore(url: string, retryMs = 0): Promise<Store> {
  try {
    return await openStore(url, { retryMs });
  } catch (error) {
    throw new UsageError(`Could not open the store ${url}: ${oneLine(error)}`);
  }
}

/**
 * Refuses a PGlite directory that holds no store, for the commands that read or decide turns: a
 * mistyped `--store` must not create an empty store and report it empty. `turnkit run --store`,
 * `worker`, `dev` and `serve` create a missing store (they say so).
 */
export function mustBeStore(url: string): void {
  if (!isDirectoryStore(url)) return;
  const dir = resolve(url.startsWith('file://') ? new URL(url).pathname : url);
  if (!existsSync(dir))
    throw new UsageError(
      `There is no store in ${dir} (no such directory); check --store. A store is created by \`turnkit run <scenario> --store DIR\`, \`turnkit dev\` or \`turnkit worker\`.`,
    );
  if (statSync(dir).isDirectory() && !existsSync(join(dir, 'PG_VERSION')))
    throw new UsageError(`${dir} is a directory but not a turnkit store (PGlite keeps a PG_VERSION file in one); check --store.`);
}

/** Says on stderr that a PGlite store is about to be created, for the commands that create one. */
export function sayIfNew(url: string): void {
  if (!isDirectoryStore(url)) return;
  const dir = resolve(url.startsWith('file://') ? new URL(url).pathname : url);
  if (!existsSync(dir)) process.stderr.write(`${safeText(`turnkit: creating a new store in ${dir}`)}\n`);
}

/**
 * Runs `work` on the store's client: through the HTTP API of the `turnkit dev` that holds the
 * store when one runs (see dev-link.ts), else on the store itself, opened (it must exist) and closed.
 */
export async function withClient<T>(url: string, work: (client: StoreClient, dev: DevLink | null) => Promise<T>): Promise<T> {
  const dev = findDevLink(url);
  if (dev !== null) {
    const client = httpStore(dev.url, dev.token);
    try {
      return await work(client, dev);
    } catch (error) {
      if (error instanceof UsageError) throw error;
      throw new UsageError(`${oneLine(error)} (turnkit dev, process ${dev.pid}, serves the store ${url})`);
    }
  }
  mustBeStore(url);
  return withStore(url, (store) => work(store, null));
}

/** Opens the store (see openCliStore for `retryMs`), runs `work`, closes the store. */
export async function withStore<T>(url: string, work: (store: Store) => Promise<T>, retryMs = 0): Promise<T> {
  const store = await openCliStore(url, retryMs);
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}

const INSTALL_DBOS = 'npm i @turnkit/dbos @dbos-inc/dbos-sdk pg';

/**
 * The client API over turns that run on DBOS, from the database DBOS runs on: a client only (the
 * processes given the agents, `createDbosTurns({ agents })`, run the turns). @turnkit/dbos is an
 * optional peer, loaded here.
 */
export async function openDbos(url: string): Promise<StoreClient> {
  let dbos: typeof import('@turnkit/dbos');
  try {
    dbos = await import('@turnkit/dbos');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ERR_MODULE_NOT_FOUND' && /@turnkit\/dbos|@dbos-inc/.test(String(error)))
      throw new UsageError(`--dbos needs @turnkit/dbos next to @turnkit/cli: ${INSTALL_DBOS}.`);
    throw error;
  }
  return dbos.createDbosTurns({ databaseUrl: url }).catch((error: unknown) => {
    throw error instanceof TypeError
      ? new UsageError(error.message)
      : new UsageError(`Could not open the turns on DBOS at ${url}: ${oneLine(error)}`);
  });
}

/** Where a command's turns are: the store of `--store`, or the turns on DBOS of `--dbos`. */
export interface TurnsAt {
  readonly store: string;
  readonly dbos?: string;
}

/** `--dbos <url>` for the commands that read or decide turns (not with `--store`). */
export function dbosOption(): Option {
  return new Option('--dbos <url>', 'turns that run on DBOS (@turnkit/dbos): the postgres:// URL of its database').conflicts(
    'store',
  );
}

/**
 * Runs `work` on the client of where the turns are: the turns on DBOS, or the store (through the
 * `turnkit dev` that holds it when one runs, see withClient); closes what it opened.
 */
export async function withTurns<T>(at: TurnsAt, work: (client: StoreClient, dev: DevLink | null) => Promise<T>): Promise<T> {
  if (at.dbos === undefined) return withClient(at.store, work);
  const client = await openDbos(at.dbos);
  try {
    return await work(client, null);
  } finally {
    await client.close();
  }
}

/** The flags that name where the turns are, for the commands printed as hints. */
export function turnsArgs(at: TurnsAt): string[] {
  return at.dbos === undefined ? storeArgs(at.store) : ['--dbos', at.dbos];
}

/**
 * How a decided or cancelled turn goes on: a worker (a command), the `turnkit dev` that holds the
 * store, or the processes that run turns on DBOS.
 */
export function continuesWith(at: TurnsAt, dev: DevLink | null = null, agentsFile = 'AGENTS_FILE'): string {
  if (at.dbos !== undefined) return 'the processes that run turns on DBOS (createDbosTurns({ agents })) continue it';
  if (dev !== null) return `turnkit dev (process ${dev.pid}) continues the turn`;
  return `a worker continues the turn: ${shellCommand(['turnkit', 'worker', '--agents', agentsFile, '--until-idle', ...storeArgs(at.store)])}`;
}

/** Reads a turn; an unknown id is a usage error that says how to list them. */
export async function getTurn(store: StoreClient, id: string, url: string): Promise<StoredTurn> {
  const turn = await store.get(id);
  if (turn === null) throw new UsageError(`There is no turn '${id}' in the store ${url}; \`turnkit ls\` lists its turns.`);
  return turn;
}

/** ` --store URL` when the store is not the default, for the commands printed as hints. */
export function storeArgs(url: string): string[] {
  return url === DEFAULT_STORE ? [] : ['--store', url];
}

/** Whether a stored turn waits for nothing but a person or has ended: what `run --store` waits for. */
export function settled(turn: StoredTurn): boolean {
  return turn.status === 'awaiting_approval' || TERMINAL_STATUSES.has(turn.status);
}

const TERMINAL_STATUSES: ReadonlySet<string> = new Set(['stopped', 'failed', 'cancelled']);

/**
 * Waits until the turn is settled (another process may be running it: a worker on Postgres, or
 * `turnkit dev`) and returns it: it watches the turn and reads it again after each status it sees.
 */
export async function untilSettled(client: StoreClient, id: string, url: string): Promise<StoredTurn> {
  const now = await getTurn(client, id, url);
  if (settled(now) || (await waitsBehind(client, now)) !== null) return now;
  const abort = new AbortController();
  try {
    for await (const event of client.watch(id, { signal: abort.signal })) {
      if (event.type !== 'status') continue;
      const turn = await getTurn(client, id, url);
      if (settled(turn)) return turn;
    }
  } finally {
    abort.abort();
  }
  return getTurn(client, id, url);
}

/**
 * The earlier turn of its thread that a turn waits behind (a thread runs one turn at a time), or
 * null: the turn is not of a thread, not waiting to start, or its thread's current turn.
 */
export async function waitsBehind(client: StoreClient, turn: StoredTurn): Promise<string | null> {
  if (turn.thread === null || turn.status !== 'ready') return null;
  const thread = await client.get({ thread: turn.thread });
  return thread?.current != null && thread.current !== turn.id ? thread.current : null;
}

/** The exit code of a stored turn: 0 stopped, 1 failed or cancelled, 3 waiting for approval, 0 otherwise (still running). */
export function exitFor(turn: StoredTurn): number {
  if (turn.status === 'failed' || turn.status === 'cancelled') return EXIT.failed;
  if (turn.status === 'awaiting_approval') return EXIT.suspended;
  return EXIT.ok;
}

function outcomeLine(turn: StoredTurn): string {
  const outcome = turn.outcome;
  if (outcome === null) return turn.status === 'awaiting_approval' ? 'waiting for approval' : `status ${turn.status}`;
  if (outcome.status === 'stopped') return `stopped: ${outcome.stopReason}`;
  if (outcome.status === 'cancelled') return `cancelled: ${outcome.reason}`;
  return `failed: ${outcome.error.kind}: ${outcome.error.message}`;
}

/**
 * The turn as lines: a header, the transcript (one line per message), the decisions, the outcome,
 * and for a parked turn the commands that decide it. Everything from the model, tools or the
 * database is printed through safeText.
 */
export function turnLines(turn: StoredTurn, url: string | TurnsAt, agentsFile?: string, dev?: DevLink | null): string[] {
  const at: TurnsAt = typeof url === 'string' ? { store: url } : url;
  const lines = [`turn ${turn.id} · agent ${turn.agent} · ${turn.status}`, ...turn.transcript.map(messageLine)];
  for (const d of turn.decisions) {
    const what =
      d.kind === 'cancel'
        ? `cancel (${d.reason ?? ''})`
        : `${d.callId ?? ''} ${d.decision?.type ?? 'unreadable (not applied; the call still waits)'}`;
    lines.push(`decision: ${what} · ${d.status}`);
  }
  lines.push(`→ ${outcomeLine(turn)}`);
  if (turn.parked.length > 0) {
    const store = turnsArgs(at);
    lines.push('', 'Waiting for a decision on:');
    // The input that runs if approved (a before-hook may have rewritten the model's).
    for (const p of turn.parked) {
      lines.push(`  ${p.call.id} ${p.call.name} ${JSON.stringify(p.input === undefined ? p.call.input : p.input)}`);
      if (p.expiresAt !== undefined)
        lines.push(`    decide by ${new Date(p.expiresAt).toISOString()} (then it is rejected as expired)`);
    }
    lines.push(
      at.dbos !== undefined
        ? 'Decide each one:'
        : dev == null
          ? 'Decide each one, then run a worker to continue the turn:'
          : `Decide each one; turnkit dev (process ${dev.pid}) continues the turn:`,
    );
    const first = turn.parked[0]?.call.id ?? '';
    lines.push(`  ${shellCommand(['turnkit', 'approve', turn.id, first, ...store])}`);
    lines.push(`  ${shellCommand(['turnkit', 'reject', turn.id, first, '--reason', 'reason for the model', ...store])}`);
    if (at.dbos !== undefined) lines.push(`  (${continuesWith(at)})`);
    else if (dev == null)
      lines.push(`  ${shellCommand(['turnkit', 'worker', '--agents', agentsFile ?? 'AGENTS_FILE', '--until-idle', ...store])}`);
  }
  return lines.map((line) => safeText(line));
}

/** What each command's register function gets from program.ts. */
export interface CommandKit {
  /** Gives a command turnkit's error handling (one line, exit 2). */
  readonly configure: (command: Command) => Command;
  readonly setExit: (code: number) => void;
}
