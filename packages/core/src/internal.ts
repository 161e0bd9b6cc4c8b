// Plumbing shared by turnkit's own packages (dispatch, inline, stream, store, testing, …): JSON
// copies and checks, the texts every interpreter writes the same way, the seal's primitives. Not
// part of the public face: it may change in any release. Users import from `@turnkit/core`.
export type {
  AgentAction,
  BlockingEffect,
  CallLlmRequest,
  CompactInfo,
  JsonObject,
  TurnAgents,
  TurnLimits,
  TurnUsage,
} from './types.js';
// Whose turn it is in a tree of agents: the interpreters and the store's decide path ask it.
export { activeTurn } from './interpreter.js';
export { TURN_STATUSES } from './state.js';
export { batchSignature, canonicalJson, sameJson } from './signature.js';
export { readDecision } from './events.js';
export { errorMessage } from './errors.js';
export { cleanReason, endSentence, formatPath, rejectionText } from './interpreter.js';
export type { DispatchOutcome } from './interpreter.js';
export { definedProps } from './props.js';
export { copyJson, isJsonValue } from './json.js';
export { MIN_SEAL_SECRET_BYTES, sealParts, verifySeal } from './seal.js';
export type { Seal } from './seal.js';
export { quietly } from './observers.js';
export { layerLimits } from './limits.js';
