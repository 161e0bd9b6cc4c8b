// What users of the turn machine call: create, step and resume a turn, read a saved state, and
// the helpers an interpreter of their own needs (see docs/custom-interpreter.md). Plumbing that
// only turnkit's own packages share is at `@turnkit/core/internal`, not here.
export type {
  ApprovalDecision,
  CallRecord,
  Delegation,
  Effect,
  JsonValue,
  Message,
  Model,
  ModelCallOptions,
  ModelRequest,
  ModelResponse,
  ModelStreamPart,
  Notice,
  Outcome,
  ParkedCall,
  ResumeOptions,
  StopReason,
  ToolCall,
  ToolResult,
  ToolSpec,
  Trace,
  TraceEntry,
  TurnBatch,
  TurnError,
  TurnEvent,
  TurnLimitsInput,
  TurnState,
  TurnStatus,
  Usage,
} from './types.js';
export { approvalDeadline, createTurn, decisionsTaken, isTerminal, resume, step } from './turn.js';
export { parseTurnState, TurnStateError, TURN_STATE_VERSION } from './state.js';
export { stateProblems } from './state-invariants.js';
export { buildModelRequest, isBlocking } from './request.js';
export { toTurnError } from './errors.js';
export { cancelPreempts, dispatchOutcomeEvent, undecided } from './interpreter.js';
export { SealError } from './seal.js';
