// Running one scenario of the corpus through an interpreter and comparing what it did with the
// scenario's hand-written transcript and outcome. No test framework needed: `runScenario` throws.

import { errorMessage } from '@turnkit/core/internal';
import type { ExpectedOutcome, Scenario } from './scenarios.js';
import { transcriptLines } from './transcript.js';
import type { ConformanceResult, ConformanceResume, ConformanceRun } from './types.js';

/** The options of the conformance suite, after the interpreter's run function. */
export interface ConformanceOptions {
  /** Continues suspended turns; with it the suspend scenarios also check the resumed turn. */
  readonly resume?: ConformanceResume;
}

/**
 * What differs between `result` and `expected`, as sentences (empty when they agree). Transcript
 * lines are compared one by one; a RegExp in `expected.transcript` must match its line.
 */
export function compareOutcome(result: ConformanceResult, expected: ExpectedOutcome): string[] {
  const problems: string[] = [];
  const same = (what: string, actual: unknown, want: unknown): void => {
    if (JSON.stringify(actual) !== JSON.stringify(want))
      problems.push(`${what}: expected ${JSON.stringify(want)}, got ${JSON.stringify(actual)}`);
  };
  same('status', result.status, expected.status);
  if (expected.stopReason !== undefined) same('stopReason', result.stopReason, expected.stopReason);
  if (expected.errorKind !== undefined) same('error.kind', result.error?.kind, expected.errorKind);
  if (expected.errorMessage !== undefined && !expected.errorMessage.test(result.error?.message ?? '')) {
    problems.push(
      `error.message: expected to match ${String(expected.errorMessage)}, got ${JSON.stringify(result.error?.message)}`,
    );
  }
  if (expected.output !== undefined) same('output', result.output, expected.output);
  if (expected.text !== undefined) same('text', result.text, expected.text);
  const lines = transcriptLines(result.transcript);
  const length = Math.max(lines.length, expected.transcript.length);
  for (let i = 0; i < length; i += 1) {
    const want = expected.transcript[i];
    const line = lines[i];
    const ok = want instanceof RegExp ? line !== undefined && want.test(line) : line === want;
    if (!ok) {
      problems.push(
        `transcript line ${i + 1}: expected ${want === undefined ? 'no line' : String(want)}, got ${line ?? 'no line'}\n  whole transcript:\n    ${lines.join('\n    ')}`,
      );
      break;
    }
  }
  return problems;
}

/** Runs one scenario (and its resume, when `resume` is given); throws an Error listing every difference. */
export async function runScenario(scenario: Scenario, run: ConformanceRun, options: ConformanceOptions = {}): Promise<void> {
  const setup = scenario.setup();
  const result = await run(setup.options);
  const problems = compareOutcome(result, scenario.expected);
  if (problems.length === 0) collect(problems, () => scenario.verify?.(result, setup));
  if (problems.length === 0 && scenario.resume !== undefined && options.resume !== undefined) {
    // What a caller would store and read back in another process.
    const saved = JSON.parse(
      JSON.stringify({ state: result.state, transcript: result.transcript, grants: result.grants ?? [] }),
    ) as {
      state: unknown;
      transcript: ConformanceResult['transcript'];
      grants: NonNullable<ConformanceResult['grants']>;
    };
    const { input: _input, tools: _tools, ...rest } = setup.options;
    const resumed = await options.resume({ ...rest, tools: setup.freshTools(), ...saved, decisions: scenario.resume.decisions });
    problems.push(...compareOutcome(resumed, scenario.resume.expected).map((p) => `after resume: ${p}`));
    const verifyResume = scenario.resume.verify;
    if (problems.length === 0 && verifyResume !== undefined) collect(problems, () => verifyResume(resumed, setup));
  }
  if (problems.length > 0) throw new Error(`Scenario '${scenario.name}' (${scenario.about}):\n- ${problems.join('\n- ')}`);
}

function collect(problems: string[], verify: () => void): void {
  try {
    verify();
  } catch (error) {
    problems.push(errorMessage(error));
  }
}
