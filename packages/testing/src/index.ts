// Testing agents without a network: scripted models, a step-by-step test interpreter, traces and
// replay, the conformance scenarios every interpreter passes, and a fake Chat Completions server.
// The vitest suites (which import vitest) are subpaths of their own.
export { scriptedModel, text, toolCalls, call, fail } from './scripted.js';
export type { ScriptStep } from './scripted.js';
export { recordTrace, replay } from './trace.js';
export { testTurn } from './interpreter.js';
export type { TestTurn } from './interpreter.js';
export { scenarios } from './scenarios.js';
export { agentScenarios } from './agent-scenarios.js';
export { threadScenarios } from './thread-scenarios.js';
export { agentTimeline, transcriptLines } from './transcript.js';
// What an interpreter under the conformance suite receives and returns (docs/custom-interpreter.md).
export type { ConformanceResult, ConformanceRunOptions } from './types.js';
export { chunk, completion, errorReply, FAKE_MODEL, sse, startFakeOpenAIServer } from './fake-openai-server.js';
export type { FakeOpenAIServer, FakeReply, FakeToolCall, FakeUsage } from './fake-openai-server.js';
