// docs/limits.md lists every option of `limits` with core's default, every budget option of core
// and of the dispatcher, and nothing that does not exist.
import { describe, expect, it } from 'vitest';
import type { TurnBudget } from '../src/types.ts';
import type { Budget } from '../../dispatch/src/types.ts';
import { createTurn } from '../src/turn.js';
import { DEFAULT_LIMITS } from '../src/limits.js';
import { codeNames, readDoc, section, tableRows } from './markdown.js';

const doc = readDoc('docs/limits.md');
/** option name → default cell, from the first table under `heading`. */
const rows = (heading: string): Map<string, string> =>
  new Map(tableRows(section(doc, heading)).map((row) => [codeNames(row[0] ?? '')[0] ?? '', row[1] ?? '']));

// Typed against the option types: adding a budget option fails `pnpm typecheck` until it is listed here (and then in the doc).
const TURN_BUDGET: Record<keyof TurnBudget, true> = {
  maxModelCalls: true,
  maxToolCalls: true,
  maxInputTokens: true,
  maxOutputTokens: true,
  maxTotalTokens: true,
  maxCost: true,
};
const DISPATCH_BUDGET: Record<keyof Budget, true> = { maxCalls: true, perTool: true };
/** Documented before core's DEFAULT_LIMITS has it; once it does, the loop below checks its default like any other. */
const DOCUMENTED_AHEAD = ['maxCallsPerReply'];

describe('docs/limits.md', () => {
  it("has a row for every key of DEFAULT_LIMITS, with core's default", () => {
    const documented = rows("The turn's limits");
    for (const [key, value] of Object.entries(DEFAULT_LIMITS)) {
      expect(documented.get(key), `the row of limits.${key}`).toBe(`\`${JSON.stringify(value)}\``);
    }
    const unknown = [...documented.keys()].filter(
      (key) => !Object.hasOwn(DEFAULT_LIMITS, key) && !DOCUMENTED_AHEAD.includes(key),
    );
    expect(unknown).toEqual([]);
  });

  it('documents maxCallsPerReply with default 32', () => {
    expect(rows("The turn's limits").get('maxCallsPerReply')).toBe('`32`');
  });

  it('lists every budget option of core, unset by default, and core accepts each', () => {
    const documented = rows('`limits.budget`: what one turn may spend');
    expect([...documented.keys()].sort()).toEqual(
      Object.keys(TURN_BUDGET)
        .map((key) => `budget.${key}`)
        .sort(),
    );
    for (const [key, cell] of documented) expect(cell, key).toBe('none');
    expect(DEFAULT_LIMITS.budget).toEqual({});
    for (const key of Object.keys(TURN_BUDGET))
      expect(createTurn({ id: 't', limits: { budget: { [key]: 1 } } }).limits.budget).toEqual({ [key]: 1 });
  });

  it("lists every option of the dispatcher's budget", () => {
    const documented = rows("The dispatcher's budget");
    expect([...documented.keys()].sort()).toEqual(
      Object.keys(DISPATCH_BUDGET)
        .map((key) => `budget.${key}`)
        .sort(),
    );
  });
});
