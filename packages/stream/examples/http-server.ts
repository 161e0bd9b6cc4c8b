// Serving a streamed turn over HTTP with node:http, as docs/streaming.md shows it. The test in
// test/http.test.ts starts this server on 127.0.0.1 and reads it with fetch.
import { createServer, type Server } from 'node:http';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Model } from '@turnkit/core';
import type { TurnResult } from '@turnkit/inline';
import { SSE_HEADERS, streamTurn } from '@turnkit/stream';

/** A server whose every request runs one turn and streams it as server-sent events. */
export function createTurnServer(model: () => Model, onResult?: (result: TurnResult) => void): Server {
  return createServer((request, response) => {
    const input = new URL(request.url ?? '/', 'http://localhost').searchParams.get('q') ?? '';
    const stream = streamTurn({ model: model(), input });
    void stream.result.then(onResult);
    response.writeHead(200, SSE_HEADERS);
    // pipeline() respects backpressure; when the client goes away it cancels the body, which
    // cancels the turn (the model stream and running tools are aborted).
    pipeline(Readable.fromWeb(stream.toSSE()), response).catch(() => undefined);
  });
}

/** The same turn as a web Response (Hono, Next.js route handlers, Deno, Bun, workers). */
export function handle(request: Request, model: Model): Response {
  const input = new URL(request.url).searchParams.get('q') ?? '';
  return streamTurn({ model, input, signal: request.signal }).toResponse();
}
