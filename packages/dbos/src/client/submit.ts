// `submit` on DBOS: the turn's row and its workflow's start in one transaction; a turn of a thread
// takes its place in line under the thread's lock, as in the store.

import { type SubmitOptions, TurnExistsError } from '@turnkit/store';
import { checkSubmit, messageOf } from '@turnkit/store/internal';
import { transaction } from '../schema.js';
import type { ClientParts } from './parts.js';
import { lockThread } from './threads.js';

/** Postgres's SQLSTATE for a unique violation. */
const UNIQUE_VIOLATION = '23505';
/** Postgres's SQLSTATE for a table that does not exist. */
const UNDEFINED_TABLE = '42P01';

/** Submits a turn (the store's checks and errors); its workflow starts with the row, or on the queue. */
export async function submit(parts: ClientParts, options: SubmitOptions): Promise<string> {
  const { pool, schema: s } = parts;
  const id = checkSubmit(options);
  const { thread } = options;
  let after: (() => Promise<void>) | null = null;
  try {
    await transaction(pool, async (tx) => {
      // A turn of a thread takes its place in line (`seq`) under the thread's lock, as in the store.
      if (thread !== undefined) await lockThread(parts, tx, thread, options.agent, options.whenBusy ?? 'wait');
      await tx.query(`INSERT INTO ${s}.turns (id, agent, input, limits, thread) VALUES ($1, $2, $3, $4::jsonb, $5)`, [
        id,
        options.agent,
        options.input ?? null,
        options.limits === undefined ? null : JSON.stringify(options.limits),
        thread ?? null,
      ]);
      after = await parts.start(tx, id);
    });
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    if (code === UNIQUE_VIOLATION) throw new TurnExistsError(id);
    if (code === UNDEFINED_TABLE)
      throw new Error(
        `store.submit: DBOS's tables are not in this database yet (${messageOf(error)}); start a process that runs turns (createDbosTurns({ agents })) on it first: DBOS creates them when it launches.`,
      );
    throw error;
  }
  await (after as (() => Promise<void>) | null)?.();
  return id;
}
