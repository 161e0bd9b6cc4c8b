// The front door: run or resume a turn in-process. The kit for writing an interpreter on inline's
// driver (driveTurn, defaultHandlers, the handler context, …) is `@turnkit/inline/driver`.
export { runTurn, resumeTurn } from './run.js';
export { keepLastMessages, runCompaction, CompactFailedError } from './compaction.js';
export type * from './types.js';
