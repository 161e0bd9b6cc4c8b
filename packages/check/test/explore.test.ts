// Exhaustive exploration of the real reducer for small limits: every reachable state, every
// event of the alphabet, every invariant on every edge. TURNKIT_TEST_VERBOSE=1 prints the numbers.

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { getAdjacencyMap, getShortestPaths, getSimplePaths } from 'xstate/graph';
import { eventsFor, exploreTurn, turnLogic, type ExploreResult } from '@turnkit/check';
import { serializeTurnSnapshot } from '../src/logic.ts';
import type { TurnLimitsInput } from '@turnkit/core';
import { testLog } from '../../../test-log.ts';

const MAX_DEPTH = 60;

function report(name: string, limits: TurnLimitsInput, result: ExploreResult): void {
  testLog(
    `explore ${name} ${JSON.stringify(limits)}: states=${result.states} transitions=${result.transitions} depth=${result.depth} ` +
      `exhaustive=${result.exhaustive} violations=${result.violationCount} time=${result.ms}ms\n  terminal outcomes ${JSON.stringify(result.terminalOutcomes)}`,
  );
}

/**
 * The explorations of docs/model-checking.md's table, read from it: its limits (an object literal
 * of plain keys, numbers and quoted strings, read as JSON) and the numbers it shows.
 */
function documentedCases(): Array<{ name: string; limits: TurnLimitsInput; states: number; transitions: number; depth: number }> {
  const doc = readFileSync(fileURLToPath(new URL('../../../docs/model-checking.md', import.meta.url)), 'utf8');
  const table = doc.split('| exploration (`test/explore.test.ts`) |')[1]?.split('\n\n')[0] ?? '';
  const number = (cell: string | undefined): number => Number((cell ?? '').replaceAll(',', ''));
  return table
    .split('\n')
    .slice(2)
    .map((line) => line.split('|').map((cell) => cell.trim()))
    .map(([, name, limits, states, transitions, depth]) => {
      const literal = (limits ?? '')
        .replace(/^`|`$/g, '')
        .replace(/([{,]\s*)([A-Za-z]\w*)\s*:/g, '$1"$2":')
        .replaceAll("'", '"');
      return {
        name: name ?? '',
        limits: JSON.parse(literal) as TurnLimitsInput,
        states: number(states),
        transitions: number(transitions),
        depth: number(depth),
      };
    });
}

describe('exhaustive exploration of step', () => {
  const cases = documentedCases();
  it('docs/model-checking.md shows four explorations', () => {
    expect(cases.map((c) => c.name)).toEqual([
      'largest required',
      'tight loop',
      'exempt tool and budgets',
      'no loops, no repairs',
    ]);
  });
  for (const { name, limits, ...shown } of cases) {
    it(`${name}: every reachable state, zero violations, the numbers the doc shows`, () => {
      const result = exploreTurn({ limits, maxDepth: MAX_DEPTH });
      report(name, limits, result);
      expect({ states: result.states, transitions: result.transitions, depth: result.depth }).toEqual(shown);
      expect(result.exhaustive).toBe(true);
      expect(result.cutOff).toBeNull();
      expect(result.violations).toEqual([]);
      expect(result.states).toBeGreaterThan(100);
      // Every way a turn ends that these limits allow is reached.
      for (const outcome of [
        'stopped:completed',
        'stopped:hook_stopped',
        'cancelled',
        'failed:unexpected_event',
        'failed:incomplete_batch',
        'failed:output_invalid',
      ]) {
        expect(result.terminalOutcomes[outcome] ?? 0, outcome).toBeGreaterThan(0);
      }
      if ((limits.loopThreshold ?? 5) > 0) expect(result.terminalOutcomes['stopped:loop_detected'] ?? 0).toBeGreaterThan(0);
      expect(result.terminalOutcomes['stopped:max_iterations'] ?? 0).toBeGreaterThan(0);
      if (limits.budget !== undefined) expect(result.terminalOutcomes['stopped:budget_exhausted'] ?? 0).toBeGreaterThan(0);
    });
  }

  it('reports progress per depth level and says when maxDepth cut the search short', () => {
    const levels: number[] = [];
    const cut = exploreTurn({
      limits: { maxIterations: 2, loopThreshold: 2, maxOutputRepairs: 1 },
      maxDepth: 4,
      onProgress: (p) => levels.push(p.depth),
    });
    expect(levels).toEqual([1, 2, 3, 4]);
    expect(cut.exhaustive).toBe(false);
    expect(cut.cutOff).toBe('maxDepth');
    expect(cut.depth).toBe(4);
  });
});

describe('turnLogic: the real step under xstate/graph', () => {
  const limits = { maxIterations: 1, loopThreshold: 2, maxOutputRepairs: 0 };
  const options = {
    events: (snapshot: { context: { state: Parameters<typeof eventsFor>[0] } }) => eventsFor(snapshot.context.state) as never,
    serializeState: serializeTurnSnapshot as never,
  };

  it('getAdjacencyMap reaches the same states as exploreTurn', () => {
    const adjacency = getAdjacencyMap(turnLogic(limits), options);
    const explored = exploreTurn({ limits, maxDepth: MAX_DEPTH });
    testLog(`xstate/graph adjacency map: ${Object.keys(adjacency).length} states; exploreTurn: ${explored.states}`);
    expect(Object.keys(adjacency).length).toBe(explored.states);
  });

  it('getShortestPaths and getSimplePaths end in every terminal status', () => {
    const shortest = getShortestPaths(turnLogic(limits), options);
    const ends = new Set(shortest.map((p) => p.state.context.state.status));
    expect([...ends].sort()).toEqual([
      'awaiting_approval',
      'calling_model',
      'cancelled',
      'dispatching',
      'executing_approved',
      'failed',
      'finalizing',
      'ready',
      'steering',
      'stopped',
    ]);
    // Without retries: simple paths grow fast, and the explorations above cover retries.
    const simple = getSimplePaths(turnLogic({ maxIterations: 1, loopThreshold: 0, maxOutputRepairs: 0, maxModelRetries: 0 }), {
      ...options,
      toState: (snapshot: { context: { state: { status: string } } }) => snapshot.context.state.status === 'stopped',
    } as never);
    testLog(`xstate/graph: ${shortest.length} shortest paths, ${simple.length} simple paths to stopped`);
    expect(simple.length).toBeGreaterThan(0);
    for (const path of simple) expect(path.state.context.state.status).toBe('stopped');
  });
});
