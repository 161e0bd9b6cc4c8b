// `store.decide`: decisions for parked calls in the inbox, durable when the call returns, applied by
// a worker in the same transaction as the state that includes them. Which parked calls still take
// a decision is core's answer (`undecided`), over the state core parses (`parseTurnState`).

import { parseTurnState, undecided, type ApprovalDecision, type TurnState } from '@turnkit/core';
import { activeTurn, readDecision } from '@turnkit/core/internal';
import type { DecideResult } from '../types.js';
import { crashPoint } from '../crash.js';
import type { Sql, SqlQuery } from '../db/types.js';
import { CallAlreadyDecidedError, messageOf, TurnNotFoundError, TurnNotWaitingError, UnknownCallError } from '../errors.js';
import { markRunnable } from './mark-runnable.js';
import { restoredState } from './values.js';
import { callKey, splitKey } from '../worker/tree.js';

/** Checks the decisions `decide` was given; returns them as entries. */
export function checkDecisions(decisions: Record<string, ApprovalDecision>): [string, ApprovalDecision][] {
  if (decisions === null || typeof decisions !== 'object' || Array.isArray(decisions))
    throw new TypeError(
      'store.decide needs decisions by call id: { [callId]: { type: "approve" } | { type: "reject", reason? } }.',
    );
  const entries = Object.entries(decisions);
  if (entries.length === 0) throw new TypeError('store.decide got no decisions; pass at least one { [callId]: decision }.');
  return entries.map(([callId, decision]) => {
    const read = readDecision(decision);
    if (read === null) {
      throw new TypeError(
        `store.decide: the decision for call '${callId}' is ${JSON.stringify(decision)}; use { type: 'approve', remember?: 'session' | 'tool' } or { type: 'reject', reason? }.`,
      );
    }
    return [callId, read];
  });
}

/** The turn's state, locked for this transaction, when it waits for approval; else the error that says why not. */
async function lockParkedState(tx: SqlQuery, id: string): Promise<TurnState> {
  const [row] = await tx.query('SELECT status, state, state_limits FROM turnkit_turns WHERE id = $1 FOR UPDATE', [id]);
  if (row === undefined) throw new TurnNotFoundError(id);
  if (row.status !== 'awaiting_approval') throw new TurnNotWaitingError(id, String(row.status));
  try {
    return parseTurnState(restoredState(id, row.state, row.state_limits));
  } catch (error) {
    throw new Error(`store.decide: the stored state of turn '${id}' cannot be read (${messageOf(error)}).`);
  }
}

/**
 * Throws unless every call id is a parked call that takes a decision now: unknown ids first
 * (UnknownCallError), then calls with a decision already, applied to the state or in the inbox
 * (CallAlreadyDecidedError). An inbox row of any status counts: the inbox keeps one decision row
 * per call, so no second one could be stored.
 */
async function checkParked(tx: SqlQuery, id: string, state: TurnState, callIds: readonly string[]): Promise<void> {
  const { callPath } = activeTurn(state);
  const parked = parkedIds(state);
  const rows = await tx.query(
    `SELECT call_id FROM turnkit_inbox WHERE turn_id = $1 AND kind = 'decision' AND call_id = ANY($2::text[])`,
    [id, parked.map((callId) => callKey(callPath, callId))],
  );
  checkDecidable(id, state, new Set(rows.map((r) => splitKey(String(r.call_id)).callId)), callIds);
}

/** The ids of the calls `state` parked (decided or not): in a tree, those of the turn that acts (core's `activeTurn`). */
export function parkedIds(state: TurnState): string[] {
  return (activeTurn(state).state.batch?.parked ?? []).map((p) => p.call.id);
}

/**
 * Throws unless every call of `callIds` is parked in `state` and has no decision yet, neither in
 * the state (core's `undecided` answers) nor among `inInbox` (the parked calls with a decision row).
 * Another engine's client (@turnkit/dbos) checks its decisions with it too.
 */
export function checkDecidable(id: string, state: TurnState, inInbox: ReadonlySet<string>, callIds: readonly string[]): void {
  const parked = parkedIds(state);
  // Which parked calls still take a decision in the state is core's answer (`undecided`).
  const open = new Set(undecided(state).map((p) => p.call.id));
  const decided = (callId: string): boolean => !open.has(callId) || inInbox.has(callId);
  const known = new Set(parked);
  const unknown = callIds.filter((callId) => !known.has(callId));
  if (unknown.length > 0)
    throw new UnknownCallError(
      id,
      unknown,
      parked.filter((callId) => !decided(callId)),
    );
  const taken = callIds.filter(decided);
  if (taken.length > 0) throw new CallAlreadyDecidedError(id, taken);
}

/**
 * Stores decisions for parked calls, all or none: when any call id is unknown or any call has a
 * decision already, it throws (see checkParked) and stores nothing, so a caller never has to find
 * out which part of a request was taken. `ignored` is always empty (a call decided already is an
 * error); it stays in the answer so that callers reading it keep working.
 */
export async function decideTurn(sql: Sql, id: string, decisions: Record<string, ApprovalDecision>): Promise<DecideResult> {
  const entries = checkDecisions(decisions);
  const result = await sql.transaction(async (tx) => {
    const state = await lockParkedState(tx, id);
    // A child turn's call is decided under its key (the path of transfer_task calls to it: tree.ts).
    const { callPath } = activeTurn(state);
    await checkParked(
      tx,
      id,
      state,
      entries.map(([callId]) => callId),
    );
    for (const [callId, decision] of entries) {
      const inserted = await tx.query(
        `INSERT INTO turnkit_inbox (turn_id, kind, call_id, body) VALUES ($1, 'decision', $2, $3::jsonb) ON CONFLICT (turn_id, call_id) WHERE kind = 'decision' DO NOTHING RETURNING id`,
        [id, callKey(callPath, callId), JSON.stringify(decision)],
      );
      // checkParked saw no row for the call under the turn's lock; throwing rolls back any row stored above.
      if (inserted.length === 0) throw new CallAlreadyDecidedError(id, [callId]);
    }
    await markRunnable(tx, id);
    return { accepted: entries.map(([callId]) => callId), ignored: [] };
  });
  crashPoint('decision_written');
  return result;
}
