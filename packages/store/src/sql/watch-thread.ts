// `store.watch({ thread })`: every turn of a thread in order, each turn's log as `store.watch`
// gives it (with the turn's id), then what follows, by polling, until the thread is closed and its
// last turn has ended.

import type { Sql } from '../db/types.js';
import type { ThreadWatchEvent, WatchOptions } from '../types.js';
import { checkPollMs, nap, toWatchEvent } from './watch.js';

export async function* watchThread(sql: Sql, thread: string, options: WatchOptions): AsyncGenerator<ThreadWatchEvent> {
  const pollMs = checkPollMs(options);
  if (options.after !== undefined)
    throw new TypeError(
      'store.watch({ thread }) takes no `after`: it follows the whole thread (watch a turn by its id to start later).',
    );
  const [found] = await sql.query('SELECT 1 FROM turnkit_threads WHERE id = $1', [thread]);
  if (found === undefined) throw new Error(`store.watch: there is no thread '${thread}'.`);
  // Where the watch is: the turn (its seq) and the entry within it.
  let turn = 0;
  let after = 0;
  for (;;) {
    if (options.signal?.aborted === true) return;
    const rows = await sql.query(
      `SELECT turn_id, turn_seq, seq, kind, data FROM turnkit_log_entries
       WHERE turn_seq = ANY(ARRAY(SELECT t.seq FROM turnkit_turns t WHERE t.thread = $1 AND t.seq >= $2))
         AND (turn_seq > $2 OR seq > $3) AND kind <> 'compaction' ORDER BY turn_seq, seq`,
      [thread, turn, after],
    );
    for (const r of rows) {
      turn = Number(r.turn_seq);
      const event = toWatchEvent(r);
      after = Number(r.seq);
      if (event !== null) yield { ...event, turnId: String(r.turn_id) };
    }
    if (rows.length === 0) {
      // Done once the thread is closed, every turn has ended and its log has been read.
      const [state] = await sql.query(
        `SELECT th.closed_at IS NOT NULL AS closed,
           NOT EXISTS (SELECT 1 FROM turnkit_turns t WHERE t.thread = th.id AND t.ended_at IS NULL) AS ended
         FROM turnkit_threads th WHERE th.id = $1`,
        [thread],
      );
      if (state === undefined || (state.closed === true && state.ended === true)) {
        const [late] = await sql.query(
          `SELECT 1 FROM turnkit_log_entries WHERE turn_seq = ANY(ARRAY(SELECT t.seq FROM turnkit_turns t WHERE t.thread = $1 AND t.seq >= $2))
             AND (turn_seq > $2 OR seq > $3) AND kind <> 'compaction' LIMIT 1`,
          [thread, turn, after],
        );
        if (late === undefined) return;
        continue;
      }
      await nap(pollMs, options.signal);
    }
  }
}
