// `@turnkit/testing/internal`: the scenario runners and their types that turnkit's own packages
// use to run the conformance corpora against their interpreters (inline, stream, the store, DBOS,
// the AI SDK adapter) and the CLI's transcript line. Not a user's face: it may change in any
// release. Users run the suites from `@turnkit/testing/conformance` and read the corpora
// (`scenarios`, `agentScenarios`, `threadScenarios`) from `@turnkit/testing`.
export { runScenario } from './run-scenario.js';
export { runAgentScenario } from './agent-scenarios.js';
export type {
  AgentScenario,
  AgentScenarioOptions,
  AgentScenarioResult,
  ResumeAgents,
  RunAgents,
  ScenarioAgent,
} from './agent-scenarios.js';
export { runThreadScenario } from './thread-scenarios.js';
export type {
  ConformanceThreadOptions,
  ConformanceThreadRun,
  ConformanceThreads,
  ThreadScenario,
  ThreadScenarioRun,
} from './thread-scenarios.js';
export { messageLine } from './transcript.js';
export type { AgentTimeline } from './transcript.js';
export type { ConformanceResume, ConformanceResumeOptions, ConformanceRun } from './types.js';
