// Migrations of a persisted turn state from older versions to the current shape (state.ts applies
// them in order before it checks the state).

import { identifyCalls, NO_CALL_IDS } from './call-ids.js';
import { bad, isObj, type Obj } from './state-error.js';

/**
 * Migrations from version N to N + 1, applied in order; a shape change adds its step here and
 * bumps TURN_STATE_VERSION. A migration refuses (with a `TurnStateError` naming the field) what it
 * cannot carry over without losing something.
 */
export const MIGRATIONS: ReadonlyArray<(old: Obj) => Obj> = [migrate1to2, migrate2to3, migrate3to4, migrate4to5];

/**
 * 4 -> 5: `agents` is new (the agents of a multi-agent turn); a version 4 turn had one agent, so
 * it is null. The status `delegating` is new too; no version 4 state has it.
 */
function migrate4to5(old: Obj): Obj {
  if ('agents' in old && old.agents !== null) bad('agents', 'is not a field of a version 4 state');
  return { ...old, agents: null };
}

/** The version 1 fields that hold the batch in flight, now grouped in `batch`. */
const V1_BATCH_KEYS = ['pending', 'held', 'parked', 'decisions', 'executing'] as const;

/**
 * 1 -> 2:
 * - The batch fields `pending`, `held`, `parked`, `decisions` and `executing` become one field
 *   `batch` (`pending` is now `batch.calls`), `null` when no batch is in flight.
 * - `awaiting_approval` with `executing` set (approved calls running) is now its own status,
 *   `executing_approved`; which calls run follows from the decisions, so `executing` is gone.
 * - `notExecuted` (results for calls past `maxCallsPerReply` or the tool-call budget) is new, in
 *   `batch`; a version 1 state has none. `limits.maxCallsPerReply` is new and defaults when absent.
 * - `seenCallIds` (every call id of the turn) is gone: call ids are checked within a reply only.
 * - `recoveries` (loop recoveries used, see `limits.loopRecoveries`) is new: a version 1 turn had
 *   none, so it starts at 0. The new limits (`maxCallsPerReply`, `maxModelRetries`,
 *   `modelRetryBackoffMs`, `loopRecoveries`) take their defaults when absent.
 */
function migrate1to2(old: Obj): Obj {
  const { seenCallIds: _seen, pending, held, parked, decisions, executing, ...rest } = old;
  const status = old.status;
  if (status !== 'dispatching' && status !== 'awaiting_approval') {
    // No batch in flight: the fields must be empty, or something would be lost.
    for (const key of V1_BATCH_KEYS) {
      const value = old[key];
      const empty =
        key === 'executing'
          ? value === null
          : key === 'decisions'
            ? isObj(value) && Object.keys(value).length === 0
            : Array.isArray(value) && value.length === 0;
      if (!empty) bad(key, `must be ${key === 'executing' ? 'null' : 'empty'} while the status is ${String(status)}`);
    }
    return { ...rest, batch: null, recoveries: 0 };
  }
  let next = status;
  if (executing !== null) {
    if (status !== 'awaiting_approval') bad('executing', `must be null while the status is ${status}`);
    if (!Array.isArray(executing) || executing.some((id) => typeof id !== 'string'))
      bad('executing', 'must be null or an array of call ids');
    // The calls running must be exactly the approved ones: version 2 reads them from the decisions.
    const approved =
      Array.isArray(parked) && isObj(decisions)
        ? parked.flatMap((p: unknown) => {
            const id = isObj(p) && isObj(p.call) ? p.call.id : undefined;
            const decision = typeof id === 'string' && Object.hasOwn(decisions, id) ? decisions[id] : undefined;
            return isObj(decision) && decision.type === 'approve' ? [id as string] : [];
          })
        : [];
    if (approved.length !== executing.length || approved.some((id, i) => executing[i] !== id)) {
      bad(
        'executing',
        `must list the approved parked calls in parked order (${JSON.stringify(approved)}), got ${JSON.stringify(executing)}`,
      );
    }
    next = 'executing_approved';
  }
  return { ...rest, status: next, batch: { calls: pending, notExecuted: [], held, parked, decisions }, recoveries: 0 };
}

/**
 * 2 -> 3: a parked call carries the input that runs if it is approved (`batch.parked[i].input`):
 * what the before-hooks left, shown to the person deciding and executed as it is. Version 2 ran
 * the call's own input, so that is what a migrated parked call keeps.
 */
function migrate2to3(old: Obj): Obj {
  const batch = old.batch;
  if (!isObj(batch) || !Array.isArray(batch.parked)) return old;
  const parked = batch.parked.map((p: unknown) =>
    isObj(p) && isObj(p.call) && !('input' in p)
      ? { call: p.call, input: p.call.input ?? null, ...(p.reason === undefined ? {} : { reason: p.reason }) }
      : p,
  );
  return { ...old, batch: { ...batch, parked } };
}

/**
 * 3 -> 4: `callIds` (call-ids.ts) gives every call of a turn its own id, so an id a model repeats in
 * a later round gets a derived one. A version 3 state kept no ids of earlier rounds, so its filter
 * holds the ids of the batch in flight only, and its count starts there: a model id repeated from
 * an earlier round of such a turn is taken as new once.
 */
function migrate3to4(old: Obj): Obj {
  const batch = old.batch;
  const calls = isObj(batch) && Array.isArray(batch.calls) ? batch.calls : [];
  const known = calls.flatMap((c: unknown) =>
    isObj(c) && typeof c.id === 'string' ? [{ id: c.id, name: '', input: null }] : [],
  );
  return { ...old, callIds: identifyCalls(NO_CALL_IDS, known).ids };
}
