// The front door: run or resume a turn in-process. The kit for writing an interpreter on inline's
// driver (driveTurn, defaultHandlers, the handler context, …) is `@turnkit/inline/driver`.
export { runTurn, resumeTurn } from './run.js';
export { createAgent } from './agent.js';
export { keepLastMessages, runCompaction, CompactFailedError } from './compaction.js';
export { ToolSelectionError } from './model.js';
export type { ToolSelection } from './model.js';
export type * from './types.js';
