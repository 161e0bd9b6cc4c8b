// The client side of turns on DBOS: the store's client API (`submit`, `get`, `list`, `decide`,
// `cancel`, `watch`) with the store's shapes, checks and errors, over the adapter's tables. A
// decision or cancel is an inbox row and its DBOS message, written in one transaction
// (`sendInTransaction`): the row says what was received (and `get` shows it), the message is what
// the turn's workflow receives, keyed by the row's id so it is sent once. Threads of turns
// (`submit({ thread })`) follow the store's contract: the thread's row is locked by a submit and a
// close, its turns run in `seq` order (the workflow waits; see workflow.ts), and `get`, `watch`,
// `listThreads` and `closeThread` answer as the store's do. Each job is a module of client/.

import type { StoreClient } from '@turnkit/store';
import { cancel } from './client/cancel.js';
import { decide } from './client/decide.js';
import { get, list } from './client/read.js';
import type { ClientParts } from './client/parts.js';
import { submit } from './client/submit.js';
import { closeThread, listThreads } from './client/threads.js';
import { watch } from './client/watch.js';
import type { DbosTurnsClient } from './types.js';

/** The store's client API over the adapter's tables and DBOS's messages, one module of client/ per job. */
export function createClient(parts: ClientParts): Omit<DbosTurnsClient, 'close' | 'runsTurns'> {
  return {
    kind: 'postgres',
    submit: (options) => submit(parts, options),
    get: ((ref: string | { readonly thread: string }) => get(parts, ref)) as StoreClient['get'],
    list: (options = {}) => list(parts, options),
    decide: (id, decisions) => decide(parts, id, decisions),
    cancel: (id, reason) => cancel(parts, id, reason),
    listThreads: (options = {}) => listThreads(parts, options),
    closeThread: (thread, reason) => closeThread(parts, thread, reason),
    watch: ((ref: string | { readonly thread: string }, options = {}) => watch(parts, ref, options)) as StoreClient['watch'],
  };
}
