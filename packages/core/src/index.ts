export type * from './types.js';
export { createTurn, isTerminal, resume, step } from './turn.js';
export { parseTurnState, TurnStateError, TURN_STATE_VERSION } from './state.js';
export { batchSignature, canonicalJson, sameBatch, sameJson } from './signature.js';
export { buildModelRequest, isBlocking } from './request.js';
export { readDecision } from './events.js';
export { errorMessage, toTurnError } from './errors.js';
export { cancelPreempts, dispatchOutcomeEvent, formatPath, undecided } from './interpreter.js';
export type { DispatchOutcome } from './interpreter.js';
