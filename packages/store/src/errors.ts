// The errors the store throws that callers tell apart: a submit whose id is taken, and the errors
// of a fenced write (the worker that gets one stops working on the turn).

/** `submit` was given an id a turn has already (a server answers it with 409, not 500). */
export class TurnExistsError extends Error {
  constructor(readonly turnId: string) {
    super(`store.submit: a turn with id '${turnId}' exists already; pick another id or leave \`id\` out.`);
    this.name = 'TurnExistsError';
  }
}

/** A write found that another worker holds the turn now (its lease token moved on). */
export class LeaseLostError extends Error {
  constructor(readonly turnId: string) {
    super(
      `Turn '${turnId}' is held by another worker now (its lease expired and was taken over); this worker stops working on it.`,
    );
    this.name = 'LeaseLostError';
  }
}

/** A write found a different version than it read: someone else wrote the turn meanwhile. */
export class ConflictError extends Error {
  constructor(readonly turnId: string) {
    super(
      `Turn '${turnId}' was written by someone else since this worker read it (compare-and-swap failed); this worker stops working on it.`,
    );
    this.name = 'ConflictError';
  }
}

/** True for the errors that mean "this worker no longer owns the turn". */
export function isFencedOut(error: unknown): error is LeaseLostError | ConflictError {
  return error instanceof LeaseLostError || error instanceof ConflictError;
}

/** The message of any thrown value. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
