// A thread's context: the conversation its next model request starts from. It is the transcript
// of the thread's latest compaction and every message written after it, read from the turn that
// holds that compaction (the thread row's `context_turn`) on: a long thread that compacts reads
// what its compaction kept, not its whole history.

import type { Message } from '@turnkit/core';
import type { Row, SqlQuery } from '../db/types.js';

/** Messages and compactions of the thread's turns from its latest compaction's turn on (up to turn `upTo`, a seq), in order. */
const CONTEXT_SQL = `SELECT kind, data FROM turnkit_log_entries
  WHERE turn_seq = ANY(ARRAY(SELECT t.seq FROM turnkit_turns t WHERE t.thread = $1 AND t.seq <= $2
    AND t.seq >= coalesce((SELECT context_turn FROM turnkit_threads WHERE id = $1), 0)))
  AND kind IN ('message', 'compaction') ORDER BY turn_seq, seq`;

/** The conversation the rows give: each message appended, each compaction replacing what came before with what it kept. */
export function contextOf(rows: readonly Row[]): Message[] {
  let context: Message[] = [];
  for (const r of rows) {
    if (r.kind === 'compaction') context = Array.isArray(r.data) ? [...(r.data as Message[])] : context;
    else context.push(r.data as Message);
  }
  return context;
}

/** The thread's context as of its turn `upTo` (a seq; by default, after every turn). */
export async function readThreadContext(
  db: SqlQuery,
  thread: string,
  upTo: number = Number.MAX_SAFE_INTEGER,
): Promise<Message[]> {
  return contextOf(await db.query(CONTEXT_SQL, [thread, upTo]));
}
