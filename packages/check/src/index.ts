// Model checking of the real `step`: exhaustive exploration, the turn contract's invariants on a
// trace, fast-check arbitraries of events, and the reader-level statechart with its diagrams.
export { exploreTurn } from './explore.js';
export type { ExploreResult } from './explore.js';
export { exploreAgents } from './explore-agents.js';
export { checkInvariants, traceFrom } from './invariants.js';
export type { StepFunction } from './logic.js';
export { arbitraryEvent, arbitraryEventScenario, arbitraryLimits, runEventScenario } from './arbitraries.js';
export { eventsFor } from './alphabet.js';
export { turnLogic } from './logic.js';
export { turnSpec } from './spec.js';
export { toDot, toMermaid } from './diagram.js';
// Model checking an agent: its turns composed with its own rules, and the properties it must keep.
export { checkAgent } from './agent.js';
export type { CheckAgentResult } from './agent.js';
export { atMostCalls, checkAgentTrace, neverAfter, neverWithoutApproval, property, ran } from './agent-properties.js';
export type { AgentProperty } from './agent-properties.js';
export { counterexampleTest } from './agent-test.js';
export { agentDispatcherOptions, agentFromModule } from './agent-types.js';
export type { CheckedAgent } from './agent-types.js';
