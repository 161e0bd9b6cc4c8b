// A real OpenAI-compatible Chat Completions server for tests: node:http on 127.0.0.1, a random
// port, answering POST /v1/chat/completions from a queue of scripted replies (JSON bodies, error
// statuses, SSE streams, or no answer at all) and recording every request it received.
// Exported by @turnkit/testing for any package's tests (and users'): point `createOpenAICompatible({ baseURL: server.baseURL })` at it.
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { definedProps } from '@turnkit/core/internal';

/** One reply the fake server sends to one request: a JSON body, an SSE stream, or nothing at all. */
export type FakeReply =
  /** A JSON body with a status (default 200). */
  | {
      readonly type: 'json';
      readonly body: unknown;
      readonly status?: number;
      readonly headers?: Readonly<Record<string, string>>;
    }
  /** An SSE stream: each chunk is sent as `data: <chunk>\n\n` (objects as JSON, strings verbatim), then `data: [DONE]` unless `done: false`. `hold: true` keeps the connection open afterwards. */
  | { readonly type: 'sse'; readonly chunks: readonly (object | string)[]; readonly done?: boolean; readonly hold?: boolean }
  /** Never answers: for abort tests. */
  | { readonly type: 'hang' };

export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  /** The parsed JSON body (the raw text when it was not JSON). */
  readonly body: any;
}

/**
 * A local HTTP server that speaks the OpenAI Chat Completions API with queued replies (`startFakeOpenAIServer`): tests
 * a real provider adapter end to end without a network.
 */
export interface FakeOpenAIServer {
  /** `http://127.0.0.1:<port>/v1`, the `baseURL` for an OpenAI-compatible provider. */
  readonly baseURL: string;
  /** Every request received, in order. */
  readonly requests: readonly RecordedRequest[];
  /** Connections the client closed before the reply was complete (an aborted call). */
  readonly disconnects: number;
  /** Queues replies, answered in order, one per request. */
  reply(...replies: FakeReply[]): void;
  /** Resolves once `count` requests have arrived. */
  waitForRequests(count: number): Promise<void>;
  /** Resolves once `count` clients have disconnected early. */
  waitForDisconnects(count: number): Promise<void>;
  /** Stops the server and closes its connections. */
  close(): Promise<void>;
}

/** The model id the reply builders put in their replies (`fake-model-1`). */
export const FAKE_MODEL = 'fake-model-1';

/** Starts the server on 127.0.0.1 with an ephemeral port. */
export async function startFakeOpenAIServer(replies: readonly FakeReply[] = []): Promise<FakeOpenAIServer> {
  const queue: FakeReply[] = [...replies];
  const requests: RecordedRequest[] = [];
  let disconnects = 0;
  const waiters: { check: () => boolean; resolve: () => void }[] = [];
  const notify = (): void => {
    for (const waiter of [...waiters]) {
      if (waiter.check()) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
    }
  };
  const until = (check: () => boolean): Promise<void> =>
    new Promise((resolve) => {
      if (check()) resolve();
      else waiters.push({ check, resolve });
    });

  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () => {
      const text = Buffer.concat(parts).toString('utf8');
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // Kept as text: the test can assert on it.
      }
      requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body });
      res.on('close', () => {
        if (!res.writableEnded) {
          disconnects++;
          notify();
        }
      });
      notify();
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        sendJson(res, 404, { error: { message: `fake server: no route for ${req.method} ${req.url}`, type: 'not_found' } });
        return;
      }
      const reply = queue.shift();
      if (reply === undefined) {
        sendJson(res, 500, {
          error: { message: `fake server: no reply queued for request #${requests.length}`, type: 'test_setup' },
        });
        return;
      }
      answer(res, reply);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    get disconnects() {
      return disconnects;
    },
    reply: (...more) => void queue.push(...more),
    waitForRequests: (count) => until(() => requests.length >= count),
    waitForDisconnects: (count) => until(() => disconnects >= count),
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

function answer(res: ServerResponse, reply: FakeReply): void {
  switch (reply.type) {
    case 'json':
      sendJson(res, reply.status ?? 200, reply.body, reply.headers);
      return;
    case 'sse': {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
      for (const chunk of reply.chunks) res.write(`data: ${typeof chunk === 'string' ? chunk : JSON.stringify(chunk)}\n\n`);
      if (reply.done !== false) res.write('data: [DONE]\n\n');
      if (reply.hold !== true) res.end();
      return;
    }
    case 'hang':
      return;
  }
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Readonly<Record<string, string>> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

// ---------------------------------------------------------------------------------------------
// Reply builders, in the OpenAI Chat Completions wire format.

/** A tool call in a fake reply (`completion`, or the stream chunk builders). */
export interface FakeToolCall {
  /** The call's id. */
  readonly id: string;
  /** The tool's name. */
  readonly name: string;
  /** The arguments text exactly as the model sends it (need not be valid JSON). */
  readonly arguments: string;
}

/** Token counts in a fake reply. */
export interface FakeUsage {
  /** `prompt_tokens`. */
  readonly prompt: number;
  /** `completion_tokens`. */
  readonly completion: number;
}

/** A non-streaming chat completion. */
export function completion(options: {
  readonly content?: string | null;
  readonly reasoning?: string;
  readonly toolCalls?: readonly FakeToolCall[];
  readonly finishReason?: string;
  readonly usage?: FakeUsage;
  readonly model?: string;
}): FakeReply {
  const toolCalls = options.toolCalls ?? [];
  return {
    type: 'json',
    body: {
      id: 'chatcmpl-fake',
      object: 'chat.completion',
      created: 1_700_000_000,
      model: options.model ?? FAKE_MODEL,
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: options.content ?? null,
            ...definedProps({ reasoning_content: options.reasoning }),
            ...(toolCalls.length === 0
              ? {}
              : {
                  tool_calls: toolCalls.map((call) => ({
                    id: call.id,
                    type: 'function',
                    function: { name: call.name, arguments: call.arguments },
                  })),
                }),
          },
          finish_reason: options.finishReason ?? (toolCalls.length > 0 ? 'tool_calls' : 'stop'),
        },
      ],
      ...(options.usage === undefined ? {} : { usage: wireUsage(options.usage) }),
    },
  };
}

/** An error status with an OpenAI-style error body. */
export function errorReply(status: number, message: string, headers: Readonly<Record<string, string>> = {}): FakeReply {
  return {
    type: 'json',
    status,
    headers,
    body: { error: { message, type: status === 429 ? 'rate_limit_exceeded' : 'server_error', code: null } },
  };
}

/** An SSE stream of chunks (see `chunk`). */
export function sse(
  chunks: readonly (object | string)[],
  options: { readonly done?: boolean; readonly hold?: boolean } = {},
): FakeReply {
  return { type: 'sse', chunks, ...options };
}

function streamChunk(delta: object, finishReason: string | null = null, model = FAKE_MODEL): object {
  return {
    id: 'chatcmpl-fake',
    object: 'chat.completion.chunk',
    created: 1_700_000_000,
    model,
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  };
}

/** Builders for streaming chunks. */
export const chunk = {
  role: (model = FAKE_MODEL) => streamChunk({ role: 'assistant', content: '' }, null, model),
  text: (text: string) => streamChunk({ content: text }),
  reasoning: (text: string) => streamChunk({ reasoning_content: text }),
  /** The first chunk of tool call `index`: id, name and (optionally) the start of its arguments. */
  toolCallStart: (index: number, id: string, name: string, args = '') =>
    streamChunk({ tool_calls: [{ index, id, type: 'function', function: { name, arguments: args } }] }),
  /** More argument text for tool call `index`. */
  toolCallArgs: (index: number, args: string) => streamChunk({ tool_calls: [{ index, function: { arguments: args } }] }),
  finish: (reason: string) => streamChunk({}, reason),
  /** The usage chunk sent when `stream_options.include_usage` is set: no choices. */
  usage: (usage: FakeUsage) => ({ ...streamChunk({}), choices: [], usage: wireUsage(usage) }),
  /** An error object inside the stream, as some servers send mid-stream. */
  error: (message: string) => ({ error: { message, type: 'server_error' } }),
};

function wireUsage(usage: FakeUsage): object {
  return { prompt_tokens: usage.prompt, completion_tokens: usage.completion, total_tokens: usage.prompt + usage.completion };
}
