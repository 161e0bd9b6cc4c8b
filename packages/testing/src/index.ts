// Testing agents without a network: scripted models, a step-by-step test interpreter, traces and
// replay, the conformance scenarios every interpreter passes, and a fake Chat Completions server.
// The vitest suites (which import vitest) are subpaths of their own.
export { scriptedModel, text, toolCalls, call, fail } from './scripted.js';
export type { ScriptStep } from './scripted.js';
export { recordTrace, replay } from './trace.js';
export { testTurn } from './interpreter.js';
export type { TestTurn } from './interpreter.js';
export { runScenario } from './run-scenario.js';
export { scenarios } from './scenarios.js';
export { agentScenarios, runAgentScenario } from './agent-scenarios.js';
export type {
  ResumeAgents,
  RunAgents,
  AgentScenarioOptions,
  AgentScenarioResult,
  AgentScenario,
  ScenarioAgent,
} from './agent-scenarios.js';
export { runThreadScenario, threadScenarios } from './thread-scenarios.js';
export type {
  ConformanceThreadOptions,
  ConformanceThreadRun,
  ConformanceThreads,
  ThreadScenario,
  ThreadScenarioRun,
} from './thread-scenarios.js';
export { agentTimeline, messageLine, transcriptLines } from './transcript.js';
export type { AgentTimeline } from './transcript.js';
export type {
  ConformanceResult,
  ConformanceResume,
  ConformanceResumeOptions,
  ConformanceRun,
  ConformanceRunOptions,
} from './types.js';
export { chunk, completion, errorReply, FAKE_MODEL, sse, startFakeOpenAIServer } from './fake-openai-server.js';
export type { FakeOpenAIServer, FakeReply, FakeToolCall, FakeUsage } from './fake-openai-server.js';
