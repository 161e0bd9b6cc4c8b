// The errors the store throws that callers tell apart: a submit whose id is taken, the reasons
// `decide` refuses decisions (a server answers them with 404 or 409 instead of looking at the
// parked calls itself), and the errors of a fenced write (the worker that gets one stops working
// on the turn).

/** `submit` was given an id a turn has already (a server answers it with 409, not 500). */
export class TurnExistsError extends Error {
  constructor(
    /** The id that is taken. */
    readonly turnId: string,
  ) {
    super(`store.submit: a turn with id '${turnId}' exists already; pick another id or leave \`id\` out.`);
    this.name = 'TurnExistsError';
  }
}

/**
 * `submit` with `whenBusy: 'refuse'` found a turn of the thread that has not ended (a server
 * answers it with 409). `turnId` is that turn: wait for it to end (`store.watch`), or submit with
 * `whenBusy: 'wait'` to queue behind it. Nothing was stored.
 */
export class ThreadBusyError extends Error {
  constructor(
    /** The busy thread. */
    readonly threadId: string,
    /** Its turn that has not ended. */
    readonly turnId: string,
    /** That turn's status. */
    readonly status: string,
  ) {
    super(
      `store.submit: thread '${threadId}' is busy: its turn '${turnId}' has not ended (status ${status}), and a thread runs one turn at a time. Nothing was stored; submit again once it ends, or leave \`whenBusy\` out to queue behind it.`,
    );
    this.name = 'ThreadBusyError';
  }
}

/** `submit` named a thread that was closed (a server answers it with 409): it takes no more turns. Start a new thread. */
export class ThreadClosedError extends Error {
  constructor(
    /** The closed thread. */
    readonly threadId: string,
  ) {
    super(`store.submit: thread '${threadId}' is closed and takes no more turns; start a new thread with another id.`);
    this.name = 'ThreadClosedError';
  }
}

/** `closeThread` was given an id no thread has (a server answers it with 404). */
export class ThreadNotFoundError extends Error {
  constructor(
    /** The id no thread has. */
    readonly threadId: string,
  ) {
    super(`store.closeThread: there is no thread '${threadId}'; check the thread id (store.listThreads lists them).`);
    this.name = 'ThreadNotFoundError';
  }
}

const quoted = (ids: readonly string[]): string => ids.map((id) => `'${id}'`).join(', ');

/** `decide` or `cancel` was given an id no turn has (a server answers it with 404). */
export class TurnNotFoundError extends Error {
  constructor(
    /** The id no turn has. */
    readonly turnId: string,
    method: 'decide' | 'cancel' = 'decide',
  ) {
    super(`store.${method}: there is no turn '${turnId}'; check the turn id (store.list lists the stored turns).`);
    this.name = 'TurnNotFoundError';
  }
}

/** `decide` was given a turn that is not parked on calls waiting for approval (a server answers it with 409). */
export class TurnNotWaitingError extends Error {
  constructor(
    /** The turn. */
    readonly turnId: string,
    /** Its status (not `awaiting_approval`). */
    readonly status: string,
  ) {
    super(
      `store.decide: turn '${turnId}' is not waiting for approval (its status is ${status}); only a turn in status awaiting_approval takes decisions.`,
    );
    this.name = 'TurnNotWaitingError';
  }
}

/**
 * `decide` was given call ids the turn has not parked (a server answers it with 409). `callIds`:
 * the unknown ones; `waiting`: the parked calls that take a decision now. Nothing was stored.
 */
export class UnknownCallError extends Error {
  constructor(
    /** The turn. */
    readonly turnId: string,
    /** The call ids it has not parked. */
    readonly callIds: readonly string[],
    /** The parked calls that take a decision now. */
    readonly waiting: readonly string[],
  ) {
    const calls = callIds.length === 1 ? 'call' : 'calls';
    const rest =
      waiting.length === 0
        ? 'and none of its calls waits for a decision now'
        : `its calls waiting for a decision are ${quoted(waiting)}`;
    super(
      `store.decide: turn '${turnId}' has no parked ${calls} ${quoted(callIds)}; ${rest}. Nothing of this request was stored; send decisions for waiting calls only.`,
    );
    this.name = 'UnknownCallError';
  }
}

/**
 * `decide` was given calls that have a decision already, applied or waiting for a worker (a
 * server answers it with 409). The first decision per call stands; nothing of this request was stored.
 */
export class CallAlreadyDecidedError extends Error {
  constructor(
    /** The turn. */
    readonly turnId: string,
    /** The calls that have a decision already. */
    readonly callIds: readonly string[],
  ) {
    const which =
      callIds.length === 1
        ? `call ${quoted(callIds)} of turn '${turnId}' has`
        : `calls ${quoted(callIds)} of turn '${turnId}' have`;
    super(
      `store.decide: ${which} a decision already, and the first decision per call stands; nothing of this request was stored, so send any other decisions again without ${callIds.length === 1 ? 'it' : 'them'}.`,
    );
    this.name = 'CallAlreadyDecidedError';
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
