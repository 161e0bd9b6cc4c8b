// A turn as a stream of events (and server-sent events), with the aggregator that checks them.
export { resumeStreamTurn, streamTurn } from './stream-turn.js';
export { SSE_HEADERS, TurnStream } from './turn-stream.js';
export type { TurnStreamEvent } from './events.js';
export { createAggregator, StreamProtocolError } from './aggregate.js';
