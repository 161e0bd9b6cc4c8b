// Exhaustive exploration of the real reducer for small limits: every reachable state, every
// event of the alphabet, every invariant on every edge. TURNKIT_TEST_VERBOSE=1 prints the numbers.

import { describe, expect, it } from 'vitest';
import { getAdjacencyMap, getShortestPaths, getSimplePaths } from 'xstate/graph';
import { eventsFor, exploreTurn, serializeTurnSnapshot, turnLogic, type ExploreResult } from '@turnkit/check';
import type { TurnLimitsInput } from '@turnkit/core';
import { testLog } from '../../../test-log.ts';

const MAX_DEPTH = 60;

function report(name: string, limits: TurnLimitsInput, result: ExploreResult): void {
  testLog(
    `explore ${name} ${JSON.stringify(limits)}: states=${result.states} transitions=${result.transitions} depth=${result.depth} ` +
      `exhaustive=${result.exhaustive} violations=${result.violationCount} time=${result.ms}ms\n  terminal outcomes ${JSON.stringify(result.terminalOutcomes)}`,
  );
}

describe('exhaustive exploration of step', () => {
  const cases: Array<[string, TurnLimitsInput]> = [
    ['largest required', { maxIterations: 3, loopThreshold: 3, maxOutputRepairs: 1 }],
    ['tight loop', { maxIterations: 3, loopThreshold: 2, maxOutputRepairs: 1 }],
    ['exempt tool and budgets', { maxIterations: 3, loopThreshold: 3, maxOutputRepairs: 1, loopExemptTools: ['clock'], budget: { maxModelCalls: 4, maxToolCalls: 4, maxTotalTokens: 150, maxCost: 0.03 } }],
    ['no loops, no repairs', { maxIterations: 2, loopThreshold: 0, maxOutputRepairs: 0 }],
  ];
  for (const [name, limits] of cases) {
    it(`${name}: every reachable state, zero violations`, () => {
      const result = exploreTurn({ limits, maxDepth: MAX_DEPTH });
      report(name, limits, result);
      expect(result.exhaustive).toBe(true);
      expect(result.violations).toEqual([]);
      expect(result.states).toBeGreaterThan(100);
      // Every way a turn ends that these limits allow is reached.
      for (const outcome of ['stopped:completed', 'stopped:hook_stopped', 'cancelled', 'failed:unexpected_event', 'failed:incomplete_batch', 'failed:output_invalid']) {
        expect(result.terminalOutcomes[outcome] ?? 0, outcome).toBeGreaterThan(0);
      }
      if ((limits.loopThreshold ?? 5) > 0) expect(result.terminalOutcomes['stopped:loop_detected'] ?? 0).toBeGreaterThan(0);
      expect(result.terminalOutcomes['stopped:max_iterations'] ?? 0).toBeGreaterThan(0);
      if (limits.budget !== undefined) expect(result.terminalOutcomes['stopped:budget_exhausted'] ?? 0).toBeGreaterThan(0);
    });
  }

  it('reports progress per depth level and says when maxDepth cut the search short', () => {
    const levels: number[] = [];
    const cut = exploreTurn({ limits: { maxIterations: 2, loopThreshold: 2, maxOutputRepairs: 1 }, maxDepth: 4, onProgress: (p) => levels.push(p.depth) });
    expect(levels).toEqual([1, 2, 3, 4]);
    expect(cut.exhaustive).toBe(false);
    expect(cut.depth).toBe(4);
  });
});

describe('turnLogic: the real step under xstate/graph', () => {
  const limits = { maxIterations: 1, loopThreshold: 2, maxOutputRepairs: 0 };
  const options = { events: (snapshot: { context: { state: Parameters<typeof eventsFor>[0] } }) => eventsFor(snapshot.context.state) as never, serializeState: serializeTurnSnapshot as never };

  it('getAdjacencyMap reaches the same states as exploreTurn', () => {
    const adjacency = getAdjacencyMap(turnLogic(limits), options);
    const explored = exploreTurn({ limits, maxDepth: MAX_DEPTH });
    testLog(`xstate/graph adjacency map: ${Object.keys(adjacency).length} states; exploreTurn: ${explored.states}`);
    expect(Object.keys(adjacency).length).toBe(explored.states);
  });

  it('getShortestPaths and getSimplePaths end in every terminal status', () => {
    const shortest = getShortestPaths(turnLogic(limits), options);
    const ends = new Set(shortest.map((p) => p.state.context.state.status));
    expect([...ends].sort()).toEqual(['awaiting_approval', 'calling_model', 'cancelled', 'dispatching', 'failed', 'finalizing', 'ready', 'steering', 'stopped']);
    const simple = getSimplePaths(turnLogic({ maxIterations: 1, loopThreshold: 0, maxOutputRepairs: 0 }), {
      ...options,
      toState: (snapshot: { context: { state: { status: string } } }) => snapshot.context.state.status === 'stopped',
    } as never);
    testLog(`xstate/graph: ${shortest.length} shortest paths, ${simple.length} simple paths to stopped`);
    expect(simple.length).toBeGreaterThan(0);
    for (const path of simple) expect(path.state.context.state.status).toBe('stopped');
  });
});
