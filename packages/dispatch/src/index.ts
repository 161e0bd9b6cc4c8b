export { raceAbort } from './abort.js';
export { defineTool } from './define.js';
export type { RetryOptions, ToolConfig, ToolContext, ToolDefinition } from './define.js';
export { createDispatcher, dispatcherFactory } from './dispatcher.js';
export { isToolErrorKind, TOOL_ERROR_KINDS, ToolError } from './errors.js';
export { DEFAULT_RETRY_POLICY } from './retry.js';
export type { KindRetry, RetryableKind, RetryPolicy } from './retry.js';
export type { ToolErrorKind, ToolErrorOptions } from './errors.js';
export { decide } from './stages/policy.js';
export { MAX_GRANT_SCOPES } from './grants.js';
export type { DecideInput, DecideOutput, NeedsApprovalFact, PolicyFact } from './stages/policy.js';
export { globMatch, matchesPattern, parsePattern } from './patterns.js';
export type { ArgCondition, MatchSteps, Pattern } from './patterns.js';
export { capOutput, MAX_DEPTH, toJsonValue } from './shape.js';
export type { ShapeOutcome } from './shape.js';
export type {
  AfterHook,
  AfterHookOutcome,
  ApprovedVerdict,
  BeforeHook,
  BeforeHookOutcome,
  Budget,
  BudgetUsage,
  CallInfo,
  CallRecord,
  DecisionRecord,
  DispatchContext,
  DispatchOutcome,
  Dispatcher,
  DispatcherOptions,
  ExecutionOutcome,
  ExecutionWrapper,
  Grant,
  GrantScope,
  NamedPermissions,
  ParkedOutcome,
  Permissions,
  Policy,
  PolicyVerdict,
  RawResult,
  ToolExecution,
  Verdict,
} from './types.js';
