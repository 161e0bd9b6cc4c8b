// The statuses a stored turn can have, and which of them end it.

import type { TurnState } from '@turnkit/core';
import { activeTurn } from '@turnkit/core/internal';
import type { StoredStatus } from './types.js';

export const TERMINAL: ReadonlySet<StoredStatus> = new Set<StoredStatus>(['stopped', 'failed', 'cancelled']);
/** Every status a stored turn can have (for `store.list({ status })`). */
export const STORED_STATUSES: readonly StoredStatus[] = [
  'ready',
  'calling_model',
  'dispatching',
  'awaiting_approval',
  'delegating',
  'steering',
  'finalizing',
  'stopped',
  'failed',
  'cancelled',
];
export const STATUSES: ReadonlySet<StoredStatus> = new Set(STORED_STATUSES);

/**
 * The status a turn's row keeps for `state`: its own, but `awaiting_approval` for a tree whose
 * acting child turn waits for a decision (core's `activeTurn`): the stored turn waits for a person,
 * so it holds no worker and takes decisions (docs/agents.md, "The durable store").
 */
export function storedStatusOf(state: TurnState): StoredStatus {
  return state.status === 'delegating' && activeTurn(state).state.status === 'awaiting_approval'
    ? 'awaiting_approval'
    : state.status;
}
