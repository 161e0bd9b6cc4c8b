// `store.watch`: a turn's log (messages, notices, status changes) in order, then what follows,
// by polling, until the turn ends. The rules are `followTurn`'s; the reads over the store's tables
// are here (@turnkit/dbos gives the same generator its own).

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

/**
 * What a watch of one turn reads, over whichever tables hold it (the store's, @turnkit/dbos's):
 * the rules of the watch (order, de-duplication, when it ends, when it waits) are `followTurn`'s.
 */
export interface TurnLogReads {
  /** The turn's row (`status`, `log_seq`: its last log entry's seq), or undefined when there is no such turn. */
  turn(id: string): Promise<Row | undefined>;
  /** The turn's log entries (`seq`, `kind`, `data`) after seq `after`, compactions left out, in seq order. */
  entries(id: string, after: number): Promise<Row[]>;
}

/**
 * A turn's log (messages, notices, status changes) in order from `options.after`, then what
 * follows, polling every `pollMs` while nothing new is written, until the turn ends (its terminal
 * status is given, or it ended with nothing more to read), the row goes, or `signal` aborts.
 */
export async function* followTurn(reads: TurnLogReads, id: string, options: WatchOptions): AsyncGenerator<WatchEvent> {
  const pollMs = checkPollMs(options);
  let after = options.after ?? 0;
  if ((await reads.turn(id)) === undefined) throw new Error(`store.watch: there is no turn '${id}'.`);
  for (;;) {
    if (options.signal?.aborted === true) return;
    const rows = await reads.entries(id, after);
    for (const r of rows) {
      const event = toWatchEvent(r);
      after = Number(r.seq);
      if (event === null) continue;
      yield event;
      if (event.type === 'status' && TERMINAL.has(event.status)) return;
    }
    if (rows.length === 0) {
      const now = await reads.turn(id);
      if (now === undefined || (TERMINAL.has(now.status as StoredStatus) && Number(now.log_seq) <= after)) return;
      await nap(pollMs, options.signal);
    }
  }
}

/** The store's reads for `followTurn`. */
function turnLogReads(sql: Sql): TurnLogReads {
  return {
    turn: async (id) => (await sql.query('SELECT status, log_seq FROM turnkit_turns WHERE id = $1', [id]))[0],
    // A compaction is not an event: it changes what later model requests carry, not what happened.
    entries: (id, after) =>
      sql.query(
        `SELECT seq, kind, data FROM turnkit_log_entries WHERE turn_id = $1 AND seq > $2 AND kind <> 'compaction' ORDER BY seq`,
        [id, after],
      ),
  };
}

export function watchTurn(sql: Sql, id: string, options: WatchOptions): AsyncGenerator<WatchEvent> {
  return followTurn(turnLogReads(sql), id, options);
}
