// How values go into rows and come back out, shared by the store's statements: timestamps as ISO
// text, a state without its id (lean, its limits last), inbox and journal rows, lease lengths.

import type { ToolResult, TurnState } from '@turnkit/core';
import { readDecision } from '@turnkit/core/internal';
import type { Row } from '../db/types.js';
import type { InboxEntry, JournalRead, PendingInbox } from '../types.js';
import {
  derefLastBatch,
  fromLean,
  LIMITS_BASE,
  longKeys,
  mapFilters,
  packFilter,
  refLastBatch,
  shortKeys,
  STATE_BASES,
  toLean,
  unpackFilter,
} from './lean.js';
import { childTurnId, splitKey } from '../worker/tree.js';

/**
 * Every row of log entries as turnkit_log_entries reads them (SQL, a subquery): the log's own rows,
 * and the journal rows that carry a checkpoint's entries (migration 10), each as (turn_seq, seq,
 * kind, data, lease_token, at).
 */
export const LOG_ROWS = `(SELECT turn_seq, seq, kind, data, lease_token, at FROM turnkit_log
  UNION ALL SELECT turn_seq, log_seq, 'entries', log, started_token, started_at FROM turnkit_tool_results WHERE log IS NOT NULL)`;

/** A timestamp column as ISO 8601 text. */
export const ISO = (column: string, as = column): string => `to_json(${column}) #>> '{}' AS ${as}`;

/**
 * A turn's state as its row gives it back: the row keeps the state without its id and with its
 * limits as its last key (see `storedState`; rows written before keep the limits in
 * `state_limits`, given here as `limits`), which this puts back from the row's id (here, not in
 * SQL: no cast of the stored text on every read), and both lean (lean.ts), which this expands
 * (call-id filters too: `unpackFilter`; a `lastBatch` kept as a reference to its batch: `derefLastBatch`).
 */
export function restoredState(id: unknown, state: unknown, limits: unknown): unknown {
  if (state === null || state === undefined) return null;
  if (typeof state !== 'object' || Array.isArray(state)) return state; // parseTurnState says what is wrong
  const { limits: kept, ...rest } = state as Record<string, unknown>;
  const full = derefLastBatch(mapFilters(fromLean(longKeys(rest), STATE_BASES), unpackFilter)) as Record<string, unknown>;
  const lean = kept ?? limits;
  return lean === null || lean === undefined ? { ...full, id } : { ...full, id, limits: fromLean(lean, LIMITS_BASE) };
}

/**
 * Keys of a stored state that rarely change from one checkpoint to the next, written last in this
 * order. Postgres logs an update in place from the first changed byte of the row to the last, and
 * the state is the row's last column: what follows the last change is not logged. So the state's
 * repeat count and status (the same over a long turn's rounds; `p` is the count's short name,
 * lean.ts's `STATE_KEYS`), its `lastBatch` reference, the lean mark and the limits (which never
 * change in a turn) come after what a round changes (its counters, its batch, its call-id filter).
 */
const LAST_KEYS: readonly string[] = ['repeats', 'p', 'status', 'lastBatch', '~', 'limits'];

/** `value` with the keys of LAST_KEYS it has moved to its end (a key stays a key: `put`). */
function lastKeysLast(value: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const set = (key: string): void =>
    void Object.defineProperty(out, key, { value: value[key], enumerable: true, writable: true, configurable: true });
  for (const key of Object.keys(value)) if (!LAST_KEYS.includes(key)) set(key);
  for (const key of LAST_KEYS) if (Object.hasOwn(value, key)) set(key);
  return out;
}

/**
 * A state as a checkpoint stores it: without its id (the row's), lean: only what differs from a
 * fresh turn's (lean.ts), its limits (lean against core's defaults) as its last key, with its
 * call-id filters as their set bits when that is shorter (`packFilter`), its `lastBatch` as a
 * reference when it repeats its batch's calls (`refLastBatch`), and what rarely changes last
 * (`LAST_KEYS`). A state that is not an object is stored as it is.
 */
export function storedState(state: TurnState | undefined): { state: string | null } {
  if (state === undefined) return { state: null };
  const { id: _id, limits, ...rest } = state;
  const lean = shortKeys(mapFilters(leanOrAsIs(refLastBatch(rest), STATE_BASES), packFilter));
  if (typeof lean !== 'object' || lean === null || Array.isArray(lean)) return { state: JSON.stringify(lean) };
  const withLimits = { ...(lean as Record<string, unknown>) };
  if (limits !== undefined)
    Object.defineProperty(withLimits, 'limits', {
      value: leanOrAsIs(limits, LIMITS_BASE),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  return { state: JSON.stringify(lastKeysLast(withLimits)) };
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

/**
 * A budget usage as a checkpoint stores it: { total, perTool } (those keys only, in that order) as
 * the pair [total, perTool], which a checkpoint rewrites whenever a tool runs; anything else as it
 * is (a row written before keeps the object, read back as it is).
 */
export function storedBudgetUsage(usage: unknown): unknown {
  if (typeof usage !== 'object' || usage === null || Array.isArray(usage)) return usage;
  const keys = Object.keys(usage);
  if (keys.length !== 2 || keys[0] !== 'total' || keys[1] !== 'perTool') return usage;
  const { total, perTool } = usage as { total: unknown; perTool: unknown };
  return [total, perTool];
}

/** The inverse of `storedBudgetUsage`: a pair [total, perTool] as { total, perTool }; anything else as it is. */
export function restoredBudgetUsage(stored: unknown): unknown {
  return Array.isArray(stored) && stored.length === 2 ? { total: stored[0], perTool: stored[1] } : stored;
}

/** A turn's messages, in order. */
export const MESSAGES_SQL = `SELECT data FROM turnkit_log_entries WHERE turn_id = $1 AND kind = 'message' ORDER BY seq`;

/** An inbox row (`turn_id`, `kind`, `call_id`, `body`, `status`, times); a child turn's decision names that turn. */
export function toInboxEntry(r: Row): InboxEntry {
  const body = (r.body ?? {}) as { reason?: unknown };
  const decision = r.kind === 'decision' ? readDecision(r.body) : null;
  const key = (r.call_id ?? null) as string | null;
  const split = key === null ? null : splitKey(key);
  return {
    kind: r.kind as 'decision' | 'cancel',
    callId: split === null ? null : split.callId,
    ...(split === null || split.callPath.length === 0 ? {} : { turn: childTurnId(String(r.turn_id), split.callPath) }),
    decision,
    reason: r.kind === 'cancel' && typeof body.reason === 'string' ? body.reason : null,
    status: r.status as InboxEntry['status'],
    createdAt: String(r.created_at),
    appliedAt: (r.applied_at ?? null) as string | null,
  };
}

/** A pending inbox row (`id`, `kind`, `call_id`, `body`) as a worker reads it. */
export function toPending(r: Row): PendingInbox {
  const body = (r.body ?? {}) as { reason?: unknown };
  return {
    inboxId: String(r.id),
    kind: r.kind as 'decision' | 'cancel',
    callId: (r.call_id ?? null) as string | null,
    decision: r.kind === 'decision' ? r.body : null,
    reason: r.kind === 'cancel' && typeof body.reason === 'string' ? body.reason : null,
  };
}

/**
 * A journal row's result (null: none yet). The row keeps a result without its `callId` and `name`
 * when they are the row's own (`call_id`, `name`), and a plain text output that is not an error as
 * that text alone (a JSON string); this puts them back.
 */
export function rowResult(r: Row): ToolResult | null {
  const result = r.result;
  if (result === null || result === undefined) return null;
  if (typeof result === 'string') return { callId: String(r.call_id), name: String(r.name), output: result, isError: false };
  if (typeof result !== 'object' || Array.isArray(result) || Object.hasOwn(result, 'callId')) return result as ToolResult;
  return { callId: String(r.call_id), name: String(r.name), ...(result as object) } as ToolResult;
}

/** Reads journal rows (`call_id`, `name`, `result`) into results and started calls. */
export function toJournalRead(rows: readonly Row[]): JournalRead {
  const results: ToolResult[] = [];
  const started: string[] = [];
  for (const r of rows) {
    const result = rowResult(r);
    if (result !== null) results.push(result);
    else started.push(String(r.call_id));
  }
  return { results, started };
}

export function checkLeaseMs(leaseMs: unknown, what = 'leaseMs'): void {
  if (typeof leaseMs !== 'number' || !Number.isInteger(leaseMs) || leaseMs < 0 || leaseMs > 2_147_483_647) {
    throw new RangeError(`${what} must be a whole number of milliseconds >= 0, got ${String(leaseMs)}.`);
  }
}
