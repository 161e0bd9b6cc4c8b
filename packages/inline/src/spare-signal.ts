// The AbortSignal of a turn nobody can cancel (no caller's signal) never aborts, so when such a
// turn ends and nobody listens on its signal, the next such turn can hand out the same one: to
// whoever reads it, it is a signal that never aborted, exactly as a new one. A model that reads
// its signal on every call (as one passing it to fetch does) then costs no AbortSignal per turn.

import { getEventListeners } from 'node:events';
import { LazyCancellation } from '@turnkit/dispatch';

let spare: AbortController | undefined;

/** The cancellation of a new turn; one that cannot be cancelled takes the spare AbortController, if there is one. */
export function newTurnCancellation(cancellable: boolean): LazyCancellation {
  if (cancellable) return new LazyCancellation();
  const given = spare;
  spare = undefined;
  return new LazyCancellation(given);
}

/**
 * After a turn that could not be cancelled: its AbortController becomes the spare, if it was never
 * aborted and nobody listens on its signal (a listener left behind would hear another turn's abort).
 */
export function spareAfterTurn(cancellation: LazyCancellation): void {
  const controller = cancellation.spare();
  if (controller !== undefined && getEventListeners(controller.signal, 'abort').length === 0) spare = controller;
}
