export { turnLogic, serializeTurnSnapshot } from './logic.js';
export type { StepFunction, TurnContext, TurnLogicEvent, TurnLogicOptions } from './logic.js';
export { eventsFor, labelledEventsFor, MALFORMED_EVENT } from './alphabet.js';
export type { EventKind, LabelledEvent } from './alphabet.js';
export { checkInvariants, checkStep, initialMonitor, traceFrom, deepClone, deepFreeze } from './invariants.js';
export type { CheckOptions, InvariantNumber, MonitorState, StepTrace, TraceStep, Violation } from './invariants.js';
export { exploreTurn, outcomeLabel } from './explore.js';
export type { ExploreOptions, ExploreResult, ExploreViolation } from './explore.js';
export {
  arbitraryChoice,
  arbitraryEvent,
  arbitraryLimits,
  arbitraryEventScenario,
  eventFromChoice,
  runEventScenario,
} from './arbitraries.js';
export type { EventChoice, EventScenario } from './arbitraries.js';
export { turnSpec } from './spec.js';
export type { TurnSpecEvent } from './spec.js';
export { toMermaid, toDot, replaceDiagram, DIAGRAM_START, DIAGRAM_END } from './diagram.js';
