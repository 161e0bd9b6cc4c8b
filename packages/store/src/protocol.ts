// `@turnkit/store/protocol`: the durable protocol's decisions as a pure function, the one the
// worker drives (worker/protocol.ts). Imports neither pg nor PGlite. Its model check is
// `@turnkit/check/store`.

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
} from './worker/protocol.js';
