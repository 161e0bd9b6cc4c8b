// Model checking of the real `step`: exhaustive exploration, the turn contract's invariants on a
// trace, fast-check arbitraries of events, and the reader-level statechart with its diagrams.
export { exploreTurn } from './explore.js';
export type { ExploreResult } from './explore.js';
export { checkInvariants, traceFrom } from './invariants.js';
export type { Violation } from './invariants.js';
export type { StepFunction } from './logic.js';
export { arbitraryEvent, arbitraryEventScenario, arbitraryLimits, runEventScenario } from './arbitraries.js';
export type { EventScenario } from './arbitraries.js';
export { eventsFor } from './alphabet.js';
export { turnLogic } from './logic.js';
export { turnSpec } from './spec.js';
export { toDot, toMermaid } from './diagram.js';
