export { resumeStreamTurn, streamingHandlers, streamTurn, type StreamTurnOptions } from './stream-turn.js';
export { formatSSE, SSE_HEADERS, TurnStream, type StreamRun } from './turn-stream.js';
export type { ModelStreamEvent, TurnStreamEvent, TurnStreamEventType } from './events.js';
export { createAggregator, StreamProtocolError, type Aggregator } from './aggregate.js';
export { streamModelResponse } from './model-call.js';
export type { EventSink } from './handoff.js';
