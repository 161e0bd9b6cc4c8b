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
import { activeTurn } from '@turnkit/core/internal';
import type { ChildLogEntry, InboxEntry, JournalEntry, StoredChildTurn, StoredStatus, StoredTurn } from '../types.js';
import { storedStatusOf } from '../statuses.js';
import { readChildLog } from './child-log.js';
import { childTurnId, splitKey } from '../worker/tree.js';
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

/** A journal row of turn `id`; a child turn's call (its key: tree.ts) by its own id, naming the child turn. */
export function toJournalEntry(r: Row, id: string): JournalEntry {
  const { callPath, callId } = splitKey(String(r.call_id));
  const result = rowResult(r);
  return {
    callId,
    ...(callPath.length === 0 ? {} : { turn: childTurnId(id, callPath) }),
    name: String(r.name),
    startedAt: (r.started_at ?? null) as string | null,
    finishedAt: (r.finished_at ?? null) as string | null,
    result: result === null || result.callId === callId ? result : { ...result, callId },
  };
}

/**
 * The child turns the `child` log entries of turn `id` name, in the order each first wrote, with
 * their messages. An entry of the turn's own id (the counts of an agent it handed off to) names no
 * child turn.
 */
export function childTurns(id: string, entries: readonly ChildLogEntry[]): StoredChildTurn[] {
  const byId = new Map<string, { id: string; agentPath: readonly string[]; transcript: ChildLogEntry['message'][] }>();
  for (const entry of entries) {
    if (entry.turn === id) continue;
    let child = byId.get(entry.turn);
    if (child === undefined) {
      child = { id: entry.turn, agentPath: entry.agentPath, transcript: [] };
      byId.set(entry.turn, child);
    }
    if (entry.message !== undefined) child.transcript.push(entry.message);
  }
  return [...byId.values()] as StoredChildTurn[];
}

/**
 * Parked calls with no decision yet, neither applied nor waiting in the inbox. A decision that
 * cannot be read (`decision: null`) decides nothing: its call is still listed.
 */
export function undecidedParked(state: TurnState | null, decisions: readonly InboxEntry[]): ParkedCall[] {
  // A tree parked in a child turn is parked too; its calls are the acting turn's (core's `undecided` gives their agent path).
  if (state === null || storedStatusOf(state) !== 'awaiting_approval') return [];
  const key = (d: InboxEntry): string | null =>
    d.callId === null ? null : d.turn === undefined ? d.callId : `${d.turn}\u0000${d.callId}`;
  const decided = new Set(
    decisions.filter((d) => d.kind === 'decision' && d.status !== 'ignored' && d.decision !== null).map(key),
  );
  const { callPath } = activeTurn(state);
  const turn = callPath.length === 0 ? undefined : childTurnId(state.id, callPath);
  return undecided(state).filter((p) => !decided.has(turn === undefined ? p.call.id : `${turn}\u0000${p.call.id}`));
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
      `SELECT turn_id, kind, call_id, body, status, ${ISO('created_at')}, ${ISO('applied_at')} FROM turnkit_inbox WHERE turn_id = $1 ORDER BY id`,
      [id],
    ),
    db.query(
      `SELECT call_id, name, result, ${ISO('started_at')}, ${ISO('finished_at')} FROM turnkit_tool_results WHERE turn_seq = (SELECT seq FROM turnkit_turns WHERE id = $1) ORDER BY coalesce(started_at, finished_at), call_id`,
      [id],
    ),
  ]);
  const { state, unreadable } = readState(id, restoredState(row.id, row.state, row.state_limits));
  // A turn of many agents: its child turns' entries (a turn of one agent has none to read).
  const children = state?.agents == null ? [] : childTurns(id, await readChildLog(db, id));
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
    toolCalls: calls.map((r) => toJournalEntry(r, id)),
    ...(children.length === 0 ? {} : { children }),
    outcome,
    error: storeError ?? unreadable ?? (outcome?.status === 'failed' ? outcome.error : null),
    createdAt: String(row.created_at),
    updatedAt: String(row.updated_at),
    endedAt: (row.ended_at ?? null) as string | null,
  };
}
