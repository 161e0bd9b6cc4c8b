// `store.watch({ thread })`: every turn of a thread in order, each turn's log as `store.watch`
// gives it (with the turn's id), then what follows, by polling, until the thread is closed and its
// last turn has ended. The rules are `followThread`'s; the reads over the store's tables are here
// (@turnkit/dbos gives the same generator its own).

import type { Row, Sql } from '../db/types.js';
import type { ThreadWatchEvent, WatchOptions } from '../types.js';
import { checkPollMs, nap, toWatchEvent } from './watch.js';

/** What a watch of a thread reads, over whichever tables hold it (the store's, @turnkit/dbos's). */
export interface ThreadLogReads {
  /** Whether there is such a thread. */
  found(thread: string): Promise<boolean>;
  /**
   * The log entries (`turn_id`, `turn_seq`, `seq`, `kind`, `data`) of the thread's turns past the
   * position (`turn`: a turn's seq; `after`: an entry's seq within it), compactions left out, in order.
   */
  entries(thread: string, turn: number, after: number): Promise<Row[]>;
  /** Whether the thread is `closed` and every turn of it has `ended`; undefined when the thread is gone. */
  state(thread: string): Promise<Row | undefined>;
}

/**
 * Every turn of a thread in order, each turn's log as `followTurn` gives it (with the turn's id),
 * then what follows, polling every `pollMs` while nothing new is written, until the thread is
 * closed, its last turn has ended and its log has been read (or `signal` aborts).
 */
export async function* followThread(
  reads: ThreadLogReads,
  thread: string,
  options: WatchOptions,
): AsyncGenerator<ThreadWatchEvent> {
  const pollMs = checkPollMs(options);
  if (options.after !== undefined)
    throw new TypeError(
      'store.watch({ thread }) takes no `after`: it follows the whole thread (watch a turn by its id to start later).',
    );
  if (!(await reads.found(thread))) throw new Error(`store.watch: there is no thread '${thread}'.`);
  // Where the watch is: the turn (its seq) and the entry within it.
  let turn = 0;
  let after = 0;
  // The thread was found closed with every turn ended: one more read takes what was written before that.
  let closing = false;
  for (;;) {
    if (options.signal?.aborted === true) return;
    const rows = await reads.entries(thread, turn, after);
    for (const r of rows) {
      turn = Number(r.turn_seq);
      const event = toWatchEvent(r);
      after = Number(r.seq);
      if (event !== null) yield { ...event, turnId: String(r.turn_id) };
    }
    if (rows.length > 0) continue;
    if (closing) return;
    const state = await reads.state(thread);
    if (state === undefined || (state.closed === true && state.ended === true)) closing = true;
    else await nap(pollMs, options.signal);
  }
}

/** The store's reads for `followThread`. */
function threadLogReads(sql: Sql): ThreadLogReads {
  return {
    found: async (thread) => (await sql.query('SELECT 1 FROM turnkit_threads WHERE id = $1', [thread])).length > 0,
    entries: (thread, turn, after) =>
      sql.query(
        `SELECT turn_id, turn_seq, seq, kind, data FROM turnkit_log_entries
         WHERE turn_seq = ANY(ARRAY(SELECT t.seq FROM turnkit_turns t WHERE t.thread = $1 AND t.seq >= $2))
           AND (turn_seq > $2 OR seq > $3) AND kind <> 'compaction' ORDER BY turn_seq, seq`,
        [thread, turn, after],
      ),
    state: async (thread) =>
      (
        await sql.query(
          `SELECT th.closed_at IS NOT NULL AS closed,
             NOT EXISTS (SELECT 1 FROM turnkit_turns t WHERE t.thread = th.id AND t.ended_at IS NULL) AS ended
           FROM turnkit_threads th WHERE th.id = $1`,
          [thread],
        )
      )[0],
  };
}

export function watchThread(sql: Sql, thread: string, options: WatchOptions): AsyncGenerator<ThreadWatchEvent> {
  return followThread(threadLogReads(sql), thread, options);
}
