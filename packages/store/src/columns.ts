// Small helpers shared by the store's queries: statuses, timestamps as ISO text, row readers.

import { readDecision } from '@turnkit/core/internal';
import { type TurnState } from '@turnkit/core';
import { fromLean, LIMITS_BASE, STATE_BASES, toLean } from './lean.js';
import type { Row } from './sql.js';
import type { InboxEntry, StoredStatus } from './types.js';

export const TERMINAL: ReadonlySet<StoredStatus> = new Set<StoredStatus>(['stopped', 'failed', 'cancelled']);
/** Every status a stored turn can have (for `store.list({ status })`). */
export const STORED_STATUSES: readonly StoredStatus[] = [
  'ready',
  'calling_model',
  'dispatching',
  'awaiting_approval',
  'steering',
  'finalizing',
  'stopped',
  'failed',
  'cancelled',
];
export const STATUSES: ReadonlySet<StoredStatus> = new Set(STORED_STATUSES);

/** A timestamp column as ISO 8601 text. */
export const ISO = (column: string, as = column): string => `to_json(${column}) #>> '{}' AS ${as}`;

/**
 * A turn's state as its row gives it back: the row keeps the state without its id and limits (see
 * `storedState`), which this puts back from the row's id and `state_limits` (here, not in SQL: no
 * cast of the stored text on every read), and both lean (lean.ts), which this expands.
 */
export function restoredState(id: unknown, state: unknown, limits: unknown): unknown {
  if (state === null || state === undefined) return null;
  if (typeof state !== 'object' || Array.isArray(state)) return state; // parseTurnState says what is wrong
  const full = fromLean(state, STATE_BASES) as Record<string, unknown>;
  return limits === null || limits === undefined ? { ...full, id } : { ...full, id, limits: fromLean(limits, LIMITS_BASE) };
}

/**
 * A state as a checkpoint stores it: without its id (the row's) and limits (kept apart, as they
 * never change in a turn), each lean: only what differs from a fresh turn's (lean.ts).
 */
export function storedState(state: TurnState | undefined): { state: string | null; limits: string | null } {
  if (state === undefined) return { state: null, limits: null };
  const { id: _id, limits, ...rest } = state;
  return {
    state: JSON.stringify(leanOrAsIs(rest, STATE_BASES)),
    limits: JSON.stringify(leanOrAsIs(limits, LIMITS_BASE)) ?? null,
  };
}

/** An object in its lean form; anything else as it is (a malformed state is stored for inspection, as given). */
function leanOrAsIs(
  value: unknown,
  base: Readonly<Record<string, unknown>> | readonly Readonly<Record<string, unknown>>[],
): unknown {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? toLean(value as Record<string, unknown>, base)
    : value;
}

/** A turn's messages, in order. */
export const MESSAGES_SQL = `SELECT data FROM turnkit_log_entries WHERE turn_id = $1 AND kind = 'message' ORDER BY seq`;

export function toInboxEntry(r: Row): InboxEntry {
  const body = (r.body ?? {}) as { reason?: unknown };
  const decision = r.kind === 'decision' ? readDecision(r.body) : null;
  return {
    kind: r.kind as 'decision' | 'cancel',
    callId: (r.call_id ?? null) as string | null,
    decision,
    reason: r.kind === 'cancel' && typeof body.reason === 'string' ? body.reason : null,
    status: r.status as InboxEntry['status'],
    createdAt: String(r.created_at),
    appliedAt: (r.applied_at ?? null) as string | null,
  };
}
