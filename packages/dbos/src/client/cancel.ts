// `cancel` on DBOS: an inbox row and its message to the turn's workflow, in one transaction.

import { type StoredStatus, TurnNotFoundError } from '@turnkit/store';
import { TERMINAL } from '@turnkit/store/internal';
import type pg from 'pg';
import { transaction } from '../schema.js';
import type { ClientParts } from './parts.js';
import { CANCEL_TOPIC, WAKE_TOPIC } from '../workflow.js';

/** Cancels a turn that has not ended (false when it had ended), as the store's `cancel` does. */
export async function cancel(parts: ClientParts, id: string, reason?: string): Promise<boolean> {
  const { pool, schema: s } = parts;
  if (reason !== undefined && typeof reason !== 'string') throw new TypeError('store.cancel: `reason` must be a string.');
  return transaction(pool, async (tx) => {
    const { rows } = await tx.query(`SELECT status FROM ${s}.turns WHERE id = $1 FOR UPDATE`, [id]);
    const row = rows[0];
    if (row === undefined) throw new TurnNotFoundError(id, 'cancel');
    if (TERMINAL.has(row.status as StoredStatus)) return false;
    await cancelIn(parts, tx, id, reason ?? 'cancelled by the caller');
    return true;
  });
}

/** Cancels a turn that has not ended, in `tx`: an inbox row, and its message to the workflow (sent once). */
export async function cancelIn({ schema: s, dbos }: ClientParts, tx: pg.PoolClient, id: string, reason: string): Promise<void> {
  const body = { reason };
  const inserted = await tx.query(
    `INSERT INTO ${s}.inbox (turn_id, kind, body) VALUES ($1, 'cancel', $2::jsonb) ON CONFLICT (turn_id) WHERE kind = 'cancel' DO NOTHING RETURNING id`,
    [id, JSON.stringify(body)],
  );
  const inboxId = inserted.rows[0]?.id;
  if (inboxId !== undefined) {
    await dbos.sendInTransaction(tx, id, body, CANCEL_TOPIC, `turnkit.cancel:${id}:${inboxId}`);
    await dbos.sendInTransaction(tx, id, {}, WAKE_TOPIC);
  }
}
