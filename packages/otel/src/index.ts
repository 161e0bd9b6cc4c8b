export { ATTR, OPERATION, SEMCONV_VERSION, TURNKIT_ATTR } from './conventions.js';
export { readTraceContext, saveTraceContext } from './trace-context.js';
export type { SavedTraceContext } from './trace-context.js';
export { traceTurn } from './trace-turn.js';
export type { ActivationEnd, TraceTurnOptions, TurnHooks, TurnTracing } from './trace-turn.js';
