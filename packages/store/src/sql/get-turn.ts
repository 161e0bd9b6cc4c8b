// `store.get`: a turn with its transcript, inbox and tool journal.

import {
  isTerminal,
  parseTurnState,
  undecided,
  type Message,
  type Outcome,
  type ParkedCall,
  type TurnError,
  type TurnState,
} from '@turnkit/core';
import type { InboxEntry, JournalEntry, StoredStatus, StoredTurn } from '../types.js';
import type { Row, SqlQuery } from '../db/types.js';
import { messageOf } from '../errors.js';
import { ISO, MESSAGES_SQL, restoredState, rowResult, toInboxEntry } from './values.js';

/** The stored state, or the reason it cannot be read. */
export function readState(id: string, raw: unknown): { state: TurnState | null; unreadable: TurnError | null } {
  if (raw === null || raw === undefined) return { state: null, unreadable: null };
  try {
    return { state: parseTurnState(raw), unreadable: null };
  } catch (error) {
    return {
      state: null,
      unreadable: { kind: 'corrupt_state', message: `The stored state of turn '${id}' cannot be read (${messageOf(error)}).` },
    };
  }
}

function toJournalEntry(r: Row): JournalEntry {
  return {
    callId: String(r.call_id),
    name: String(r.name),
    startedAt: (r.started_at ?? null) as string | null,
    finishedAt: (r.finished_at ?? null) as string | null,
    result: rowResult(r),
  };
}

/**
 * Parked calls with no decision yet, neither applied nor waiting in the inbox. A decision that
 * cannot be read (`decision: null`) decides nothing: its call is still listed.
 */
export function undecidedParked(state: TurnState | null, decisions: readonly InboxEntry[]): ParkedCall[] {
  if (state === null || state.status !== 'awaiting_approval' || state.batch === null) return [];
  const decided = new Set(
    decisions.filter((d) => d.kind === 'decision' && d.status !== 'ignored' && d.decision !== null).map((d) => d.callId),
  );
  return undecided(state).filter((p) => !decided.has(p.call.id));
}

export async function getTurn(db: SqlQuery, id: string): Promise<StoredTurn | null> {
  const [row] = await db.query(
    `SELECT id, agent, thread, input, status, state, state_limits, error, ${ISO('created_at')}, ${ISO('updated_at')}, ${ISO('ended_at')} FROM turnkit_turns WHERE id = $1`,
    [id],
  );
  if (row === undefined) return null;
  const [log, inbox, calls] = await Promise.all([
    db.query(MESSAGES_SQL, [id]),
    db.query(
      `SELECT kind, call_id, body, status, ${ISO('created_at')}, ${ISO('applied_at')} FROM turnkit_inbox WHERE turn_id = $1 ORDER BY id`,
      [id],
    ),
    db.query(
      `SELECT call_id, name, result, ${ISO('started_at')}, ${ISO('finished_at')} FROM turnkit_tool_results WHERE turn_seq = (SELECT seq FROM turnkit_turns WHERE id = $1) ORDER BY coalesce(started_at, finished_at), call_id`,
      [id],
    ),
  ]);
  const { state, unreadable } = readState(id, restoredState(row.id, row.state, row.state_limits));
  const decisions = inbox.map(toInboxEntry);
  const storeError = (row.error ?? null) as TurnError | null;
  const outcome: Outcome | null =
    storeError !== null ? { status: 'failed', error: storeError } : state !== null && isTerminal(state) ? state.outcome : null;
  return {
    id: String(row.id),
    agent: String(row.agent),
    thread: (row.thread ?? null) as string | null,
    status: row.status as StoredStatus,
    input: (row.input ?? null) as string | null,
    state,
    transcript: log.map((r) => r.data as Message),
    parked: undecidedParked(state, decisions),
    decisions,
    toolCalls: calls.map(toJournalEntry),
    outcome,
    error: storeError ?? unreadable ?? (outcome?.status === 'failed' ? outcome.error : null),
    createdAt: String(row.created_at),
    updatedAt: String(row.updated_at),
    endedAt: (row.ended_at ?? null) as string | null,
  };
}
