// Approvals recorded and not yet executed. A parked call's final decision record is written once:
// a rejection, an expiry, a failed approve callback or a cancel when it happens, an approval when
// the approved call reaches `executeApproved` (where a deny rule in force then may still stop it,
// and the record says so instead). Between the two, the approval's source waits here.

import type { GrantScope } from './types.js';

/** At most this many recorded approvals wait for their calls to run; the oldest are forgotten first. */
export const MAX_WAITING_APPROVALS = 10_000;

export class ApprovalLedger {
  readonly #waiting = new Map<string, string>();
  readonly #usedUpFront = new Set<string>();

  /**
   * True the first time a decision given up front is used for call `callId` of the turn, false
   * after: call ids come from the model and may repeat in a later reply, and a decision made for
   * one call must never decide another that reuses its id.
   */
  useUpFront(scope: GrantScope, callId: string): boolean {
    const k = key(scope, callId);
    if (this.#usedUpFront.has(k)) return false;
    if (this.#usedUpFront.size >= MAX_WAITING_APPROVALS)
      this.#usedUpFront.delete(this.#usedUpFront.values().next().value as string);
    this.#usedUpFront.add(k);
    return true;
  }

  /** Notes that a person approved call `callId` of the turn, with the record source to use when it runs. */
  note(scope: GrantScope, callId: string, source: string): void {
    if (this.#waiting.size >= MAX_WAITING_APPROVALS) this.#waiting.delete(this.#waiting.keys().next().value as string);
    this.#waiting.set(key(scope, callId), source);
  }

  /** The source noted for the call (`user` when none was: the approval came from elsewhere), forgotten now. */
  take(scope: GrantScope, callId: string): string {
    const k = key(scope, callId);
    const source = this.#waiting.get(k) ?? 'user';
    this.#waiting.delete(k);
    return source;
  }

  /** Forgets the call's approval (it ended another way). */
  drop(scope: GrantScope, callId: string): void {
    this.#waiting.delete(key(scope, callId));
  }
}

function key(scope: GrantScope, callId: string): string {
  return `${scope.turnId}\u0000${callId}`;
}
