// Wake-ups: when a turn becomes runnable (submitted, decided, cancelled, handed back) the statement
// that makes it so also runs pg_notify on the store's channel, delivered when it commits. Workers of
// other processes hear it over LISTEN on a connection of their own, which reconnects after Postgres
// restarts; workers in the same process (the only ones PGlite can have) hear it in-process.

import { createHash } from 'node:crypto';
import type { ListenHandlers, Sql } from './types.js';

/** The channel of a store's notifications: one per Postgres schema, so scratch schemas do not wake each other. */
export function channelOf(schema: string): string {
  return `turnkit_${createHash('sha256').update(schema).digest('hex').slice(0, 24)}`;
}

/** The same channel, computed by the statement that notifies (so notifying needs no statement of its own). */
export const CHANNEL_SQL = `'turnkit_' || left(encode(sha256(convert_to(current_schema(), 'UTF8')), 'hex'), 24)`;

interface ClientLike {
  connect(): Promise<unknown>;
  query(text: string): Promise<unknown>;
  end(): Promise<void>;
  on(event: 'notification', listener: (message: { channel: string }) => void): unknown;
  on(event: 'error' | 'end', listener: (error?: Error) => void): unknown;
  removeAllListeners(): unknown;
}

export type ClientFactory = () => ClientLike;

const RECONNECT_MIN_MS = 100;
const RECONNECT_MAX_MS = 5_000;

/**
 * Keeps one connection that LISTENs on `channel`, reconnecting with backoff (0.1 s doubling to
 * 5 s) whenever it drops. Resolves once the first LISTEN is in place (or the first try failed:
 * the listener keeps trying, and polling covers the gap). Returns the stop.
 */
export async function listenPostgres(
  makeClient: ClientFactory,
  channel: string,
  handlers: ListenHandlers,
): Promise<() => Promise<void>> {
  let stopped = false;
  let client: ClientLike | null = null;
  let delay = RECONNECT_MIN_MS;
  let timer: NodeJS.Timeout | null = null;
  let down = false;

  const lost = (error?: unknown): void => {
    const dead = client;
    client = null;
    if (dead !== null) void closeQuietly(dead);
    if (stopped) return;
    if (!down) {
      down = true;
      quietly(() => handlers.onConnection?.('lost', error));
    }
    timer = setTimeout(() => void connect(), delay);
    delay = Math.min(delay * 2, RECONNECT_MAX_MS);
  };

  async function connect(): Promise<void> {
    timer = null;
    if (stopped) return;
    const next = makeClient();
    next.on('error', (error) => (client === next ? lost(error) : undefined));
    next.on('end', () => (client === next ? lost(new Error('the listening connection ended')) : undefined));
    next.on('notification', (message) => {
      if (message.channel === channel) quietly(handlers.onNotify);
    });
    try {
      client = next;
      await next.connect();
      await next.query(`LISTEN ${channel}`);
    } catch (error) {
      if (client === next) lost(error);
      return;
    }
    delay = RECONNECT_MIN_MS;
    if (down) {
      down = false;
      quietly(() => handlers.onConnection?.('restored'));
      quietly(handlers.onNotify);
    }
  }

  await connect();
  return async () => {
    stopped = true;
    if (timer !== null) clearTimeout(timer);
    const last = client;
    client = null;
    if (last !== null) await closeQuietly(last);
  };
}

/** Ends a connection we no longer listen on; its late errors are ignored. */
function closeQuietly(client: ClientLike): Promise<void> {
  client.removeAllListeners();
  client.on('error', () => undefined);
  return client.end().catch(() => undefined);
}

/** Who hears a store's wake-ups, and how they are sent: see `wakeups`. */
export interface Wakeups {
  /** Wakes this process's listeners when the database cannot (PGlite); `really` false does nothing. */
  wake(really?: boolean): void;
  /** Hears wake-ups: from this process, and on Postgres from every process. Resolves to the stop. */
  listen(handlers: ListenHandlers): Promise<() => Promise<void>>;
  /** Forgets every listener (the store is closing). */
  clear(): void;
}

/**
 * A store's wake-ups over one connection: on Postgres the statement that makes a turn runnable
 * notifies (NOTIFY reaches this process's workers too); PGlite has no other process, so this one
 * calls its own listeners.
 */
export function wakeups(sql: Sql, db: () => Sql): Wakeups {
  const listeners = new Set<ListenHandlers>();
  // The notification channel is the schema's; read once, when a worker first listens.
  let channelRead: Promise<string> | null = null;
  const channel = (): Promise<string> =>
    (channelRead ??= db()
      .query('SELECT current_schema() AS schema')
      .then(([row]) => channelOf(String(row?.schema ?? 'public'))));
  return {
    wake(really = true) {
      if (really && sql.listen === undefined) for (const l of listeners) quietly(l.onNotify);
    },
    async listen(handlers) {
      listeners.add(handlers);
      const stop = sql.listen === undefined ? null : await sql.listen(await channel(), handlers);
      return async () => {
        listeners.delete(handlers);
        await stop?.();
      };
    },
    clear: () => listeners.clear(),
  };
}

/** Calls a listener; a listener that throws must not break a store call, the connection or the worker. */
function quietly(fn: () => void): void {
  try {
    fn();
  } catch {
    // ignored on purpose
  }
}
