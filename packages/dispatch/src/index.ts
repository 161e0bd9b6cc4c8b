// What users of the tool-call chokepoint call: define tools, make a dispatcher, the permission
// decision (`decide`), tool errors, and the types of hooks, policies, permissions, budgets and
// grants they write. What turnkit's own packages share with the dispatcher (its context, outcomes,
// the cancellation race, pattern and shape helpers) is at `@turnkit/dispatch/internal`.
export { defineTool } from './define.js';
export { agentTools } from './agent-tools.js';
export type { ToolContext, ToolDefinition } from './define.js';
export { createDispatcher } from './dispatcher.js';
export { ToolError } from './errors.js';
export type { ToolErrorKind } from './errors.js';
export { decide } from './stages/policy.js';
export type {
  AfterHook,
  BeforeHook,
  Budget,
  CallInfo,
  Dispatcher,
  DispatcherOptions,
  Grant,
  Permissions,
  Policy,
} from './types.js';
