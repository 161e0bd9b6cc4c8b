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
import type { StoreClient } from './types.js';

/** The client over a connection (`db` throws once the store is closed); `close` is the store's. */
export function createClient(db: () => Sql, wakeups: Wakeups): Omit<StoreClient, 'kind' | 'close'> {
  const wake = <T>(value: T, really = true): T => {
    wakeups.wake(really);
    return value;
  };
  return {
    submit: async (options) => wake(await submitTurn(db(), options)),
    get: async (id) => getTurn(db(), id),
    list: async (options) => listTurns(db(), options),
    decide: async (id, decisions) => {
      const result = await decideTurn(db(), id, decisions);
      return wake(result, result.accepted.length > 0);
    },
    cancel: async (id, reason) => wake(await cancelTurn(db(), id, reason)),
    watch: (id, options = {}) => watchTurn(db(), id, options),
  };
}
