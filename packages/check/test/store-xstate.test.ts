// The turn machine's check walks `step` with xstate/graph as well as with its own explorer; the
// protocol's world is walked the same way here: `getAdjacencyMap` over the world as xstate actor
// logic (`fromTransition`, an event per enabled action) reaches exactly the worlds exploreStore does.

import { exploreStore, STORE_CHECKS, type WorldConfig } from '@turnkit/check/internal';
import type { World } from '../src/store/types.ts';
import { actions, initialWorld } from '../src/store/world.ts';
import { protocol } from '@turnkit/store/internal';
import { describe, expect, it } from 'vitest';
import { fromTransition } from 'xstate';
import { getAdjacencyMap, getShortestPaths } from 'xstate/graph';
import { testLog } from '../../../test-log.ts';
import { STRAIGHT_RUN } from './store-walk.ts';

// Bounds: the first exploration's world without its pause: 2 workers, one turn (a plain and a
// parked call), 1 death (2,002 worlds).
const first = STORE_CHECKS[0]?.config;
if (first === undefined) throw new Error('no exploration');
const config: WorldConfig = { ...first, pauses: 0 };

const logic = fromTransition((world: World, event: { type: string }): World => {
  const next = actions(config, world, protocol).find((a) => a.label === event.type)?.next;
  if (next === undefined) throw new Error(`no action '${event.type}' is enabled in this world`);
  return next;
}, initialWorld(config));

const options = {
  events: (snapshot: { context: World }) => actions(config, snapshot.context, protocol).map((a) => ({ type: a.label })),
  serializeState: (snapshot: { context: World }) => JSON.stringify(snapshot.context),
};

describe('xstate/graph over the protocol world', () => {
  it('getAdjacencyMap reaches the same worlds as exploreStore', () => {
    const adjacency = getAdjacencyMap(logic, options as never);
    const explored = exploreStore({ config });
    testLog(`xstate/graph adjacency map: ${Object.keys(adjacency).length} worlds; exploreStore: ${explored.states}`);
    expect(explored.exhaustive).toBe(true);
    expect(Object.keys(adjacency).length).toBe(explored.states);
  });

  it('getShortestPaths finds the straight run: the approval arrives while the worker still holds the parked turn', () => {
    const paths = getShortestPaths(logic, options as never);
    const ended = paths.filter((p) => (p.state.context as World).rows.every((r) => r.status === 'done'));
    const shortest = ended.reduce((a, b) => (b.steps.length < a.steps.length ? b : a));
    const labels = shortest.steps.map((s) => s.event.type).filter((type) => !type.startsWith('xstate.'));
    testLog(`shortest path to the end: ${labels.join(' → ')}`);
    expect(labels).toEqual(STRAIGHT_RUN);
  });
});
