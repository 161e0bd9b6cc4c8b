export { scriptedModel, text, toolCalls, call, fail, splitText } from './scripted.js';
export type { ReplyExtras, ScriptedCall, ScriptedModel, ScriptedModelOptions, ScriptStep } from './scripted.js';
export { recordTrace, replay } from './trace.js';
export type { ReplayDifference, ReplayReport, Trace, TraceEntry, TraceRecorder } from './trace.js';
export { startTurn } from './interpreter.js';
export type { StartTurnOptions, TestTurn } from './interpreter.js';
// interpreterConformance is in '@turnkit/testing/conformance' (it imports vitest).
export { compareOutcome, runScenario } from './run-scenario.js';
export type { ConformanceOptions } from './run-scenario.js';
export { scenarios } from './scenarios.js';
export type { ExpectedOutcome, Probe, Scenario, ScenarioRun } from './scenarios.js';
export { messageLine, transcriptLines } from './transcript.js';
export type {
  ConformanceResult,
  ConformanceResume,
  ConformanceResumeOptions,
  ConformanceRun,
  ConformanceRunOptions,
} from './types.js';
export { chunk, completion, errorReply, FAKE_MODEL, sse, startFakeOpenAIServer } from './fake-openai-server.js';
export type { FakeOpenAIServer, FakeReply, FakeToolCall, FakeUsage, RecordedRequest } from './fake-openai-server.js';
