// Plumbing turnkit's own packages (inline, stream, store, testing, check, cli) share with the
// dispatcher. Not part of the public face: it may change in any release. Users import from
// `@turnkit/dispatch`.
export { raceAbort } from './abort.js';
export type { RetryOptions, ToolConfig } from './define.js';
export { dispatcherFactory } from './dispatcher.js';
export { isToolErrorKind, TOOL_ERROR_KINDS } from './errors.js';
export { DEFAULT_RETRY_POLICY } from './retry.js';
export type { KindRetry, RetryableKind, RetryPolicy } from './retry.js';
export { MAX_GRANT_SCOPES } from './grants.js';
export type { NeedsApprovalFact, PolicyFact } from './stages/policy.js';
export { globMatch, matchesPattern, parsePattern } from './patterns.js';
export type { ArgCondition, MatchSteps, Pattern } from './patterns.js';
export { capOutput, MAX_DEPTH, toJsonValue } from './shape.js';
export type { ShapeOutcome } from './shape.js';
export type {
  AfterHookOutcome,
  ApprovedVerdict,
  BeforeHookOutcome,
  BudgetUsage,
  DecisionRecord,
  DispatchContext,
  DispatchOutcome,
  ExecutionOutcome,
  ExecutionWrapper,
  GrantScope,
  NamedPermissions,
  ParkedOutcome,
  PolicyVerdict,
  RawResult,
  ToolExecution,
  Verdict,
} from './types.js';
