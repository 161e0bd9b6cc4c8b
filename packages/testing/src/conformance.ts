// The interpreter conformance suite as a vitest `describe` block: every scenario of the corpus, run
// through any interpreter, checked against the scenario's hand-written transcript and outcome (the
// same scripted scenario gives the same transcript and outcome under every interpreter:
// docs/turn-contract.md).
// Its own entry point, `@turnkit/testing/conformance`, because it imports vitest (an optional peer):
// importing `@turnkit/testing` never loads a test framework.

import { describe, it } from 'vitest';
import { runScenario, type ConformanceOptions } from './run-scenario.js';
import { scenarios } from './scenarios.js';
import type { ConformanceRun } from './types.js';
import { agentScenarios, runAgentScenario, type ResumeAgents, type RunAgents } from './agent-scenarios.js';

export type { ConformanceOptions } from './run-scenario.js';

/**
 * Registers a vitest `describe` block that runs every scenario through `run`.
 *
 * @example
 * import { runTurn, resumeTurn } from '@turnkit/inline';
 * import { interpreterConformance } from '@turnkit/testing/conformance';
 * interpreterConformance('inline', runTurn, { resume: resumeTurn });
 */
export function interpreterConformance(name: string, run: ConformanceRun, options: ConformanceOptions = {}): void {
  describe(`interpreter conformance: ${name}`, () => {
    for (const scenario of scenarios) it(scenario.name, () => runScenario(scenario, run, options));
  });
}

/**
 * Registers a vitest `describe` block that runs every multi-agent scenario (docs/agents.md) through
 * `run`, and `resume` for the scenarios that suspend.
 *
 * @example
 * agentConformance('inline', runTurn, resumeTurn);
 */
export function agentConformance(name: string, run: RunAgents, resume?: ResumeAgents): void {
  describe(`multi-agent conformance: ${name}`, () => {
    for (const scenario of agentScenarios) it(scenario.name, () => runAgentScenario(scenario, run, resume));
  });
}
