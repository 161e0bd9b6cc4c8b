// Plumbing turnkit's own packages (inline, stream, store, testing, check, cli) share with the
// dispatcher. Not part of the public face: it may change in any release. Users import from
// `@turnkit/dispatch`.
export { raceAbort } from './abort.js';
export type { AgentTarget } from './agent-tools.js';
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
// The permission decision's own pieces, for @turnkit/check's `checkAgent`, which explores an
// agent's rules through them (never a copy): the checked configuration, the rule facts, the tool's
// needsApproval, the deny-at-execution check and the budget ledger.
export { resolveConfig } from './config.js';
export type { DispatcherConfig, PermissionSet } from './config.js';
export { denialNow, factsWithPolicy } from './stages/policy.js';
export { BudgetLedger } from './budget.js';
export type { BudgetLimits } from './budget.js';
export { validateInput } from './stages/normalise.js';
export type { Subject } from './stages/hooks.js';
