// The statuses a stored turn can have, and which of them end it.

import type { StoredStatus } from './types.js';

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
