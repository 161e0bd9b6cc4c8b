// OpenTelemetry traces of turns: `traceTurn`, and the GenAI attribute names it writes.
export { ATTR, OPERATION, SEMCONV_VERSION } from './conventions.js';
export { traceTurn } from './trace-turn.js';
