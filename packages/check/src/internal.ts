// `@turnkit/check/internal`: the model check of @turnkit/store's durable protocol, turnkit's own
// tooling (the CLI's `turnkit check --store` and the repository's tests use it; users run the CLI). The real protocol
// function (`protocolStep` from @turnkit/store/internal) runs in a model world (two workers, process
// deaths, expiring leases), explored exhaustively with the invariants on every edge, and each
// planted mutant must be caught. `turnkit check --store` runs it; `--write` puts its figures into
// docs/model-checking.md.

export type { WorldConfig } from './store/types.js';
export { exploreStore, STORE_INVARIANTS } from './store/explore.js';
export type { StoreCheckResult, StoreViolation } from './store/explore.js';
export { PROTOCOL_MUTANTS } from './store/mutants.js';
export {
  runStoreChecks,
  STORE_CHECK_MARKERS,
  STORE_CHECKS,
  storeCheckPassed,
  storeCheckSection,
  withStoreCheckSection,
} from './store/report.js';
export type { StoreCheckReport, StoreCheckSpec } from './store/report.js';

// The parts of `exploreTurn`'s loop that `pnpm bench --check` runs bare (no invariant checked), to
// measure what an edge costs before any check.
export { FingerprintSet, ValueFingerprint } from './fingerprint.js';
