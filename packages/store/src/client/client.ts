// The client side of a store: each call is one SQL operation (../sql/), and a call that makes a
// turn runnable wakes this process's workers when the database cannot (PGlite).

import type { Wakeups } from '../db/notify.js';
import type { Sql } from '../db/types.js';
import { cancelTurn } from '../sql/cancel.js';
import { decideTurn } from '../sql/decide.js';
import { getTurn } from '../sql/get-turn.js';
import { listTurns } from '../sql/list-turns.js';
import { submitTurn } from '../sql/submit.js';
import { watchTurn } from '../sql/watch.js';
import { closeThread } from '../sql/close-thread.js';
import { getThread, listThreads } from '../sql/get-thread.js';
import { watchThread } from '../sql/watch-thread.js';
import type { WatchOptions } from '../types.js';
import type { StoreClient } from './types.js';

/** `{ thread }` (a thread), as opposed to a turn's id; anything else that is not a string is refused. */
function isThreadRef(ref: unknown): ref is { readonly thread: string } {
  if (typeof ref === 'string') return false;
  if (ref !== null && typeof ref === 'object' && typeof (ref as { thread?: unknown }).thread === 'string') return true;
  throw new TypeError(`Pass a turn's id or { thread: id }, got ${JSON.stringify(ref) ?? String(ref)}.`);
}

/** The client over a connection (`db` throws once the store is closed); `close` is the store's. */
export function createClient(db: () => Sql, wakeups: Wakeups): Omit<StoreClient, 'kind' | 'close'> {
  const wake = <T>(value: T, really = true): T => {
    wakeups.wake(really);
    return value;
  };
  return {
    submit: async (options) => wake(await submitTurn(db(), options)),
    get: (async (ref: string | { readonly thread: string }) =>
      isThreadRef(ref) ? getThread(db(), ref.thread) : getTurn(db(), ref)) as StoreClient['get'],
    list: async (options) => listTurns(db(), options),
    listThreads: async (options) => listThreads(db(), options),
    closeThread: async (thread, reason) => wake(await closeThread(db(), thread, reason)),
    decide: async (id, decisions) => {
      const result = await decideTurn(db(), id, decisions);
      return wake(result, result.accepted.length > 0);
    },
    cancel: async (id, reason) => wake(await cancelTurn(db(), id, reason)),
    watch: ((ref: string | { readonly thread: string }, options: WatchOptions = {}) =>
      isThreadRef(ref) ? watchThread(db(), ref.thread, options) : watchTurn(db(), ref, options)) as StoreClient['watch'],
  };
}
