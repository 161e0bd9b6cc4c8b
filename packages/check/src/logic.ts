// The real reducer as xstate actor logic, so `xstate/graph` (getAdjacencyMap, getShortestPaths,
// getSimplePaths) traverses `step` itself rather than a copy of it.

import { createTurn, step as coreStep } from '@turnkit/core';
import type { Effect, TurnLimitsInput, TurnState } from '@turnkit/core';
import { fromTransition } from 'xstate';
import type { Snapshot } from 'xstate';

/** `step`'s signature; injectable so tests can model-check a deliberately broken copy. */
export type StepFunction = (state: TurnState, event: unknown) => readonly [TurnState, readonly Effect[]];

/** What the actor holds: the turn state and the effects of the last step. */
export interface TurnContext {
  readonly state: TurnState;
  readonly effects: readonly Effect[];
}

/** Events as xstate sees them: any object with a string `type` (malformed payloads included). */
export type TurnLogicEvent = { readonly type: string; readonly [key: string]: unknown };

export interface TurnLogicOptions {
  /** The turn id of the initial state (default `turn-1`). */
  readonly id?: string;
  /** The reducer to wrap (default `@turnkit/core`'s `step`). */
  readonly step?: StepFunction;
}

/**
 * `step` wrapped with `fromTransition`. The snapshot's context is `{ state, effects }`.
 *
 * @example
 * const adjacency = getAdjacencyMap(turnLogic({ maxIterations: 1 }), { events: (s) => eventsFor(s.context.state), serializeState: serializeTurnSnapshot });
 */
export function turnLogic(limits: TurnLimitsInput = {}, options: TurnLogicOptions = {}) {
  const run = options.step ?? coreStep;
  const initial: TurnContext = { state: createTurn({ id: options.id ?? 'turn-1', limits }), effects: [] };
  return fromTransition((context: TurnContext, event: TurnLogicEvent): TurnContext => {
    const [state, effects] = run(context.state, event);
    return { state, effects };
  }, initial);
}

/** Keys a snapshot by its turn state only (the last effects are not part of the state). */
export function serializeTurnSnapshot(snapshot: Snapshot<unknown> & { readonly context: TurnContext }): string {
  return JSON.stringify(snapshot.context.state);
}
