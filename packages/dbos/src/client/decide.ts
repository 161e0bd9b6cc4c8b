// `decide` on DBOS: each decision an inbox row and its DBOS message (keyed by the row's id, so it
// is sent once), written in one transaction with the store's checks.

import { parseTurnState, type ApprovalDecision, type TurnState } from '@turnkit/core';
import { CallAlreadyDecidedError, type StoreClient, TurnNotFoundError, TurnNotWaitingError } from '@turnkit/store';
import { activeKeys, checkDecidable, checkDecisions, messageOf, parkedIds, splitKey } from '@turnkit/store/internal';
import { transaction } from '../schema.js';
import type { ClientParts } from './parts.js';
import { decisionTopic, WAKE_TOPIC } from '../workflow.js';

/** Decides parked calls of a turn waiting for approval (a child turn's by its own call id), as the store's `decide` does. */
export async function decide(
  { pool, schema: s, dbos }: ClientParts,
  id: string,
  decisions: Record<string, ApprovalDecision>,
): ReturnType<StoreClient['decide']> {
  const entries = checkDecisions(decisions);
  return transaction(pool, async (tx) => {
    const { rows } = await tx.query(`SELECT status, state FROM ${s}.turns WHERE id = $1 FOR UPDATE`, [id]);
    const row = rows[0];
    if (row === undefined) throw new TurnNotFoundError(id);
    if (row.status !== 'awaiting_approval') throw new TurnNotWaitingError(id, String(row.status));
    let state: TurnState;
    try {
      state = parseTurnState(row.state);
    } catch (error) {
      throw new Error(`store.decide: the stored state of turn '${id}' cannot be read (${messageOf(error)}).`);
    }
    // A child turn's call is decided under its key (the path of transfer_task calls to it), as in the store.
    const { key } = activeKeys(state);
    const inbox = await tx.query(
      `SELECT call_id FROM ${s}.inbox WHERE turn_id = $1 AND kind = 'decision' AND call_id = ANY($2::text[])`,
      [id, parkedIds(state).map(key)],
    );
    const callIds = entries.map(([callId]) => callId);
    checkDecidable(id, state, new Set(inbox.rows.map((r) => splitKey(String(r.call_id)).callId)), callIds);
    for (const [callId, decision] of entries) {
      const inserted = await tx.query(
        `INSERT INTO ${s}.inbox (turn_id, kind, call_id, body) VALUES ($1, 'decision', $2, $3::jsonb) ON CONFLICT (turn_id, call_id) WHERE kind = 'decision' DO NOTHING RETURNING id`,
        [id, key(callId), JSON.stringify(decision)],
      );
      const inboxId = inserted.rows[0]?.id;
      if (inboxId === undefined) throw new CallAlreadyDecidedError(id, [callId]);
      // The decision's id (its inbox row) keys its message: it is sent once.
      await dbos.sendInTransaction(tx, id, { decision }, decisionTopic(key(callId)), `turnkit.decision:${id}:${inboxId}`);
    }
    await dbos.sendInTransaction(tx, id, {}, WAKE_TOPIC);
    return { accepted: callIds, ignored: [] };
  });
}
