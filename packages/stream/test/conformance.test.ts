import type { TurnResult } from '@turnkit/inline';
import { interpreterConformance } from '@turnkit/testing/conformance';
import { resumeStreamTurn, streamTurn, type TurnStream } from '../src/index.js';

/** Reads every event (as a consumer would), then returns the result. */
async function readToEnd(stream: TurnStream<TurnResult>): Promise<TurnResult> {
  for await (const event of stream) void event;
  return stream.result;
}

interpreterConformance('stream', (options) => readToEnd(streamTurn(options)), {
  resume: (options) => readToEnd(resumeStreamTurn(options)),
});

// Nobody reads: awaiting `result` alone must drive the same turns.
interpreterConformance('stream, result only', (options) => streamTurn(options).result, {
  resume: (options) => resumeStreamTurn(options).result,
});
