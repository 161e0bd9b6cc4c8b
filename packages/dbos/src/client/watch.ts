// `watch` on DBOS: the store's watch (`followTurn`, `followThread`: the same order, de-duplication,
// end and polling) over the adapter's tables; only the reads are here.

import type { StoreClient, ThreadWatchEvent, WatchEvent } from '@turnkit/store';
import { followThread, followTurn, type ThreadLogReads, type TurnLogReads } from '@turnkit/store/internal';
import type { ClientParts } from './parts.js';

/** A turn's log, or every turn of a thread in order, then what follows, until it ends (the store's rules). */
export function watch(
  parts: ClientParts,
  ref: string | { readonly thread: string },
  options: Parameters<StoreClient['watch']>[1] & object = {},
): AsyncGenerator<WatchEvent | ThreadWatchEvent> {
  if (typeof ref === 'object' && ref !== null) return followThread(threadLogReads(parts), ref.thread, options);
  if (typeof ref !== 'string') throw new TypeError(`store.watch takes a turn id or { thread }, got ${JSON.stringify(ref)}.`);
  return followTurn(turnLogReads(parts), ref, options);
}

/** A turn's row and log entries in the adapter's tables. */
function turnLogReads({ pool, schema: s }: ClientParts): TurnLogReads {
  return {
    turn: async (id) => (await pool.query(`SELECT status, log_seq FROM ${s}.turns WHERE id = $1`, [id])).rows[0],
    // A compaction is not an event: it changes what later model requests carry, not what happened.
    entries: async (id, after) =>
      (
        await pool.query(
          `SELECT seq, kind, data FROM ${s}.log WHERE turn_id = $1 AND seq > $2 AND kind <> 'compaction' ORDER BY seq`,
          [id, after],
        )
      ).rows,
  };
}

/** A thread's row and its turns' log entries in the adapter's tables. */
function threadLogReads({ pool, schema: s }: ClientParts): ThreadLogReads {
  return {
    found: async (thread) => (await pool.query(`SELECT 1 FROM ${s}.threads WHERE id = $1`, [thread])).rows.length > 0,
    entries: async (thread, turn, after) =>
      (
        await pool.query(
          `SELECT t.id AS turn_id, t.seq AS turn_seq, l.seq, l.kind, l.data FROM ${s}.turns t JOIN ${s}.log l ON l.turn_id = t.id
           WHERE t.thread = $1 AND (t.seq > $2 OR (t.seq = $2 AND l.seq > $3)) AND l.kind <> 'compaction' ORDER BY t.seq, l.seq`,
          [thread, turn, after],
        )
      ).rows,
    state: async (thread) =>
      (
        await pool.query(
          `SELECT th.closed_at IS NOT NULL AS closed,
             NOT EXISTS (SELECT 1 FROM ${s}.turns t WHERE t.thread = th.id AND t.ended_at IS NULL) AS ended
           FROM ${s}.threads th WHERE th.id = $1`,
          [thread],
        )
      ).rows[0],
  };
}
