// The one scenario every system runs: the model calls `add` {a: 0, b: 1}, then
// `add` {a: 1, b: 1}, then answers 'done'. A system counts only if it produced exactly these
// tool results and this final text, so nobody wins by skipping work.

/** What a system reports after one turn of the scenario. */
export interface TurnOutcome {
  readonly toolResults: readonly unknown[];
  readonly text: string;
}

/** One benchmarked system: a name and a function that runs one complete turn of the scenario. */
export interface BenchSystem {
  readonly name: string;
  /** What the system is: `--quick` runs the turnkit systems and the floor, not the peers. */
  readonly kind: 'turnkit' | 'floor' | 'peer';
  readonly run: () => Promise<TurnOutcome>;
}

export const EXPECTED_TOOL_RESULTS: readonly number[] = [1, 2];
export const EXPECTED_TEXT = 'done';
/** The `add` inputs of the two tool rounds, in order. */
export const ADD_INPUTS: readonly { readonly a: number; readonly b: number }[] = [
  { a: 0, b: 1 },
  { a: 1, b: 1 },
];

// Peers whose tools must return strings (OpenAI Agents, LangChain, pi) report '1' and '2'; the
// number they carry is what is compared, anything else (an error text, an object) is a mismatch.
function asNumber(value: unknown): number | undefined {
  if (typeof value === 'number') return value;
  if (typeof value === 'string' && /^-?\d+(\.\d+)?$/.test(value.trim())) return Number(value);
  return undefined;
}

/** Throws an Error naming the system and what differed when an outcome is not the scenario's. */
export function verifyOutcome(system: string, outcome: TurnOutcome): void {
  const numbers = outcome.toolResults.map(asNumber);
  const resultsMatch = numbers.length === EXPECTED_TOOL_RESULTS.length && numbers.every((n, i) => n === EXPECTED_TOOL_RESULTS[i]);
  if (!resultsMatch) {
    throw new Error(
      `${system} produced tool results ${JSON.stringify(outcome.toolResults)} instead of ${JSON.stringify(EXPECTED_TOOL_RESULTS)}; ` +
        'its numbers are not comparable, fix its port in packages/bench before benchmarking it.',
    );
  }
  if (outcome.text !== EXPECTED_TEXT) {
    throw new Error(
      `${system} answered ${JSON.stringify(outcome.text)} instead of ${JSON.stringify(EXPECTED_TEXT)}; ` +
        'its numbers are not comparable, fix its port in packages/bench before benchmarking it.',
    );
  }
}
