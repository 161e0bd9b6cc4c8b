// The model check of a tree of agents (packages/check/src/explore-agents.ts): a parent with one
// child, each with its own small limits, explored exhaustively through the real reducer, and two
// broken reducers it must catch.
import { describe, expect, it } from 'vitest';
import { step, type TurnState } from '@turnkit/core';
import { exploreAgents } from '../src/explore-agents.js';
import { testLog } from '../../../test-log.ts';

const parent = { maxIterations: 2, maxOutputRepairs: 0, maxModelRetries: 0, budget: { maxModelCalls: 4, maxToolCalls: 3 } };
const child = { maxIterations: 1, maxOutputRepairs: 0, maxModelRetries: 0 };
const MAX_DEPTH = 40;

describe(`a parent with one child, explored exhaustively (depth ≤ ${MAX_DEPTH})`, () => {
  it('keeps A1–A6 on every edge, and every path ends', () => {
    const result = exploreAgents({ parent, child, maxDepth: MAX_DEPTH });
    expect(result.violations).toEqual([]);
    expect(result.exhaustive).toBe(true);
    // The tree is really explored: children stop, fail, are cancelled, and the budget ends parents.
    expect(Object.keys(result.terminalOutcomes).sort()).toEqual([
      'cancelled',
      'failed:provider_error',
      'stopped:budget_exhausted',
      'stopped:completed',
      'stopped:max_iterations',
    ]);
    testLog(`explore a parent with one child: states=${result.states} transitions=${result.transitions} depth=${result.depth}`);
    expect(result.states).toBeGreaterThan(300);
  });

  it('catches a reducer that approves every parked child call, whatever the person said (A1)', () => {
    const approvesAll = (state: TurnState, event: unknown) => {
      const e = event as { type?: string; decisions?: Record<string, unknown> };
      if (e.type !== 'approvals_decided' || e.decisions === undefined) return step(state, event);
      const decisions = Object.fromEntries(Object.keys(e.decisions).map((id) => [id, { type: 'approve' }]));
      return step(state, { type: 'approvals_decided', decisions });
    };
    const result = exploreAgents({ parent, child, maxDepth: MAX_DEPTH, step: approvesAll });
    expect(result.violations.some((v) => v.invariant === 'A1')).toBe(true);
  });

  it('catches a reducer that forgets the child on a cancel (A3)', () => {
    const forgets = (state: TurnState, event: unknown) => {
      const e = event as { type?: string };
      if (e.type !== 'cancel' || state.agents?.child == null) return step(state, event);
      // Cancel the parent as if no child ran: drop the child and its delegation first.
      const orphaned = {
        ...state,
        status: 'steering',
        batch: null,
        agents: { ...state.agents, delegations: [], child: null },
      } as TurnState;
      return step(orphaned, event);
    };
    const result = exploreAgents({ parent, child, maxDepth: MAX_DEPTH, step: forgets });
    expect(result.violations.some((v) => v.invariant === 'A3')).toBe(true);
  });
});
