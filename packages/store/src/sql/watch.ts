// `store.watch`: a turn's log (messages, notices, status changes) in order, then what follows,
// by polling, until the turn ends.

import type { Message, Notice, Outcome } from '@turnkit/core';
import type { ChildLogEntry, StoredStatus, WatchEvent, WatchOptions } from '../types.js';
import type { Row, Sql } from '../db/types.js';
import { TERMINAL } from '../statuses.js';

/** Waits `ms`, or less when `signal` aborts. */
export function nap(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** The event of a log entry (a message, a notice or a status change); null for a child turn's entry that is not one (its grants, its compaction). */
export function toWatchEvent(r: Row): WatchEvent | null {
  const seq = Number(r.seq);
  if (r.kind === 'message') return { type: 'message', seq, message: r.data as Message };
  if (r.kind === 'child') {
    // A child turn's message or notice (docs/agents.md), with the child turn and its agent path.
    const entry = r.data as ChildLogEntry;
    const child = { turn: entry.turn, agentPath: entry.agentPath };
    if (entry.message !== undefined) return { type: 'message', seq, message: entry.message, child };
    if (entry.notice !== undefined) return { type: 'notice', seq, notice: entry.notice, child };
    return null;
  }
  if (r.kind === 'notice') return { type: 'notice', seq, notice: r.data as Notice };
  const data = r.data as { status: StoredStatus; outcome: Outcome | null };
  return { type: 'status', seq, status: data.status, outcome: data.outcome ?? null };
}

/** Checks `watch`'s `pollMs` (default 200); returns it. */
export function checkPollMs(options: WatchOptions): number {
  const pollMs = options.pollMs ?? 200;
  if (!Number.isFinite(pollMs) || pollMs < 1)
    throw new RangeError(`store.watch option \`pollMs\` must be a number of milliseconds >= 1, got ${String(pollMs)}.`);
  return pollMs;
}

export async function* watchTurn(sql: Sql, id: string, options: WatchOptions): AsyncGenerator<WatchEvent> {
  const pollMs = checkPollMs(options);
  let after = options.after ?? 0;
  const [turn] = await sql.query('SELECT status FROM turnkit_turns WHERE id = $1', [id]);
  if (turn === undefined) throw new Error(`store.watch: there is no turn '${id}'.`);
  for (;;) {
    if (options.signal?.aborted === true) return;
    // A compaction is not an event: it changes what later model requests carry, not what happened.
    const rows = await sql.query(
      `SELECT seq, kind, data FROM turnkit_log_entries WHERE turn_id = $1 AND seq > $2 AND kind <> 'compaction' ORDER BY seq`,
      [id, after],
    );
    for (const r of rows) {
      const event = toWatchEvent(r);
      after = Number(r.seq);
      if (event === null) continue;
      yield event;
      if (event.type === 'status' && TERMINAL.has(event.status)) return;
    }
    if (rows.length === 0) {
      const [now] = await sql.query('SELECT status, log_seq FROM turnkit_turns WHERE id = $1', [id]);
      if (now === undefined || (TERMINAL.has(now.status as StoredStatus) && Number(now.log_seq) <= after)) return;
      await nap(pollMs, options.signal);
    }
  }
}
