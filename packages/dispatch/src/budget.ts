// The budget ledger (pipeline stages 6 and 8): executed calls per dispatcher, against the limits.
// A call is reserved before it runs (so calls of one batch count in call order, even when they run
// at once) and recorded as used when it has run; a retried call counts once.

import { quote } from './text.js';
import type { BudgetUsage } from './types.js';

/** The limits, as the validated configuration holds them. */
export interface BudgetLimits {
  readonly maxCalls: number | undefined;
  readonly perTool: ReadonlyMap<string, number>;
}

/** Why a call may not run (its error kind is `budget`): the decision source and the text the model sees. */
export interface BudgetBreach {
  readonly source: string;
  readonly text: string;
}

export class BudgetLedger {
  readonly #limits: BudgetLimits;
  #usedTotal: number;
  readonly #usedPerTool: Map<string, number>;
  // Calls that passed the pre-check and have not been recorded yet.
  #inFlightTotal = 0;
  readonly #inFlightPerTool = new Map<string, number>();

  /** `usage`: the counters of a suspended turn, already validated. */
  constructor(limits: BudgetLimits, usage: BudgetUsage) {
    this.#limits = limits;
    this.#usedTotal = usage.total;
    this.#usedPerTool = new Map(Object.entries(usage.perTool));
  }

  /** Stage 6: reserves one call of `tool`, or says which limit it would pass (reserving nothing). */
  reserve(tool: string): BudgetBreach | undefined {
    const { maxCalls, perTool } = this.#limits;
    if (maxCalls !== undefined && this.#usedTotal + this.#inFlightTotal >= maxCalls) {
      return {
        source: 'budget:maxCalls',
        text: `Call to ${quote(tool)} not run: the tool-call budget is used up (budget.maxCalls = ${maxCalls}). Answer with what you have.`,
      };
    }
    const limit = perTool.get(tool);
    if (limit !== undefined && (this.#usedPerTool.get(tool) ?? 0) + (this.#inFlightPerTool.get(tool) ?? 0) >= limit) {
      return {
        source: `budget:perTool:${tool}`,
        text: `Call to ${quote(tool)} not run: this tool's budget is used up (budget.perTool.${tool} = ${limit}). Use another tool or answer with what you have.`,
      };
    }
    this.#inFlightTotal++;
    this.#inFlightPerTool.set(tool, (this.#inFlightPerTool.get(tool) ?? 0) + 1);
    return undefined;
  }

  /** Stage 8, first half: a reserved call of `tool` has run and now counts as used. */
  record(tool: string): void {
    this.#inFlightTotal--;
    this.#inFlightPerTool.set(tool, (this.#inFlightPerTool.get(tool) ?? 1) - 1);
    this.#usedTotal++;
    this.#usedPerTool.set(tool, (this.#usedPerTool.get(tool) ?? 0) + 1);
  }

  /** Executed calls so far, plain JSON. */
  usage(): BudgetUsage {
    return { total: this.#usedTotal, perTool: Object.fromEntries(this.#usedPerTool) };
  }
}
