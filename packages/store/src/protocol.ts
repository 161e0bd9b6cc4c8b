// `@turnkit/store/protocol`: the durable protocol's decisions as a pure function, the model world
// it is checked in, the exploration and the planted mutants. Imports neither pg nor PGlite.

export {
  claimable,
  claimLimit,
  openHold,
  protocol,
  protocolStep,
  type ClaimingWorker,
  type ClaimRow,
  type Departure,
  type Hold,
  type InboxRow,
  type LostReason,
  type Protocol,
  type ProtocolEffect,
  type ProtocolEvent,
} from './protocol/protocol.js';
export { actions, allDone, initialWorld, type CallSpec, type TurnSpec, type World, type WorldConfig } from './protocol/world.js';
export {
  edgeViolations,
  exploreStore,
  STORE_INVARIANTS,
  type StoreCheckOptions,
  type StoreCheckResult,
  type StoreInvariant,
  type StoreViolation,
} from './protocol/explore.js';
export { PROTOCOL_MUTANTS, type ProtocolMutant } from './protocol/mutants.js';
export {
  runStoreChecks,
  STORE_CHECK_MARKERS,
  STORE_CHECKS,
  storeCheckPassed,
  storeCheckSection,
  withStoreCheckSection,
  type MutantOutcome,
  type StoreCheckProgress,
  type RunStoreChecksOptions,
  type StoreCheckReport,
  type StoreCheckSpec,
} from './protocol/report.js';
