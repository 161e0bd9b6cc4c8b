export type * from './types.js';
export { approvalDeadline, createTurn, decisionsTaken, isTerminal, resume, step } from './turn.js';
export { parseTurnState, TurnStateError, TURN_STATE_VERSION, TURN_STATUSES } from './state.js';
export { stateProblems } from './state-invariants.js';
export type { StateProblem } from './state-invariants.js';
export { batchSignature, canonicalJson, sameBatch, sameJson } from './signature.js';
export { buildModelRequest, isBlocking } from './request.js';
export { readDecision } from './events.js';
export { errorMessage, toTurnError } from './errors.js';
export {
  cancelPreempts,
  cleanReason,
  dispatchOutcomeEvent,
  formatPath,
  MAX_REJECTION_REASON,
  rejectionText,
  undecided,
} from './interpreter.js';
export type { DispatchOutcome } from './interpreter.js';
export { definedProps } from './props.js';
export { quietly } from './observers.js';
export { copyJson, isJsonValue } from './json.js';
export { MIN_SEAL_SECRET_BYTES, SealError, sealParts, verifySeal } from './seal.js';
export type { Seal } from './seal.js';
