export { runBench, writeBenchmarksDoc, type BenchSettings, type FigureSizes } from './bench.js';
export { timeTurns, type SystemTiming, type TurnTimingOptions } from './harness.js';
export { ensurePeers, peersInstalled, PEER_SPECS } from './peer-install.js';
export { loadPeerSystems } from './peers.js';
export {
  checkTargets,
  formatTerminal,
  renderMarkdown,
  TARGETS,
  type BenchReport,
  type TargetCheck,
  type TargetVerdict,
} from './report.js';
export { bytesPerTurn, type AllocationFigure } from './allocation.js';
export { checkSpeedBar, type GuardVerdict } from './guard.js';
export { floorSystem, floorTurn } from './floor.js';
export { measureLongTurn } from './long-turn.js';
export { topEntries, type ProfileEntry, type ProfileFigure } from './profile.js';
export { EXPECTED_TEXT, EXPECTED_TOOL_RESULTS, verifyOutcome, type BenchSystem, type TurnOutcome } from './scenario.js';
export { measureStep, STEP_SCRIPTS } from './step-bench.js';
export { median, p95, quantile } from './stats.js';
export { scenarioModel, TURNKIT_REFERENCE, turnkitSystems } from './turnkit.js';
export { runStoreBench, type StoreBenchOptions, type StoreFigure } from './store-bench.js';
export {
  currentStoreSection,
  formatStoreTerminal,
  renderStoreSection,
  STORE_END,
  STORE_START,
  withStoreSection,
  writeStoreSection,
} from './store-report.js';
