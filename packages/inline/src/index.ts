// The front door: run or resume a turn in-process. The kit for writing an interpreter on inline's
// driver (driveTurn, defaultHandlers, the handler context, …) is `@turnkit/inline/driver`.
export { runTurn, resumeTurn } from './run.js';
export { createAgent } from './agent.js';
export { keepLastMessages, runCompaction, CompactFailedError } from './compaction.js';
// The types a caller writes. Option and result parts (a check's verdict, a tool selection's
// input, the ended or suspended variants of TurnResult, ...) are reachable through these.
export type {
  Agent,
  AgentOptions,
  ApprovalAnswer,
  ApproveFn,
  CheckFn,
  CompactFn,
  NamedAgent,
  OutputSchema,
  ResumeTurnOptions,
  RunTurnOptions,
  SuspendedTurnResult,
  TurnResult,
} from './types.js';
