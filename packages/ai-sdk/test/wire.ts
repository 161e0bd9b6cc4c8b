// One model reply in both wire formats the fake server speaks: a JSON chat completion (what
// `generate`, and so runTurn, asks for) or an SSE stream (what `stream`, and so streamTurn, asks
// for). Turn tests describe a reply once and run it under either interpreter; the conformance
// bridge turns a scripted model's response into the same replies.
import type { Model, ModelResponse } from '@turnkit/core';
import {
  chunk,
  completion,
  FAKE_MODEL,
  type FakeOpenAIServer,
  type FakeReply,
  type FakeToolCall,
  type FakeUsage,
  sse,
} from '@turnkit/testing';

export type Wire = 'json' | 'sse';

export interface Reply {
  readonly text?: string;
  readonly reasoning?: string;
  readonly toolCalls?: readonly FakeToolCall[];
  readonly usage?: FakeUsage;
  readonly model?: string;
}

/**
 * The reply as the server sends it. In SSE, text goes word by word and every tool call's
 * arguments are split into pieces of at most `argsPiece` characters, each in its own chunk.
 */
export function wireReply(wire: Wire, reply: Reply, argsPiece = 6): FakeReply {
  const toolCalls = reply.toolCalls ?? [];
  if (wire === 'json') {
    return completion({
      content: reply.text ?? null,
      toolCalls,
      ...(reply.reasoning === undefined ? {} : { reasoning: reply.reasoning }),
      ...(reply.usage === undefined ? {} : { usage: reply.usage }),
      ...(reply.model === undefined ? {} : { model: reply.model }),
    });
  }
  const chunks: object[] = [chunk.role(reply.model ?? FAKE_MODEL)];
  if (reply.reasoning !== undefined && reply.reasoning !== '') chunks.push(chunk.reasoning(reply.reasoning));
  for (const word of (reply.text ?? '').match(/\S+\s*|\s+/g) ?? []) chunks.push(chunk.text(word));
  toolCalls.forEach((call, index) => {
    const [first = '', ...rest] = pieces(call.arguments, argsPiece);
    chunks.push(chunk.toolCallStart(index, call.id, call.name, first));
    for (const piece of rest) chunks.push(chunk.toolCallArgs(index, piece));
  });
  chunks.push(chunk.finish(toolCalls.length > 0 ? 'tool_calls' : 'stop'));
  if (reply.usage !== undefined) chunks.push(chunk.usage(reply.usage));
  return sse(chunks);
}

/** A scripted model's response as a wire reply (arguments of a call with `inputError` go as its raw text). */
export function replyFor(response: ModelResponse): Reply {
  const usage = response.usage;
  return {
    text: response.text,
    ...(response.reasoning === undefined ? {} : { reasoning: response.reasoning }),
    toolCalls: response.toolCalls.map((call) => ({
      id: call.id,
      name: call.name,
      arguments: call.inputError !== undefined && typeof call.input === 'string' ? call.input : JSON.stringify(call.input),
    })),
    ...(usage?.inputTokens === undefined && usage?.outputTokens === undefined
      ? {}
      : { usage: { prompt: usage?.inputTokens ?? 0, completion: usage?.outputTokens ?? 0 } }),
    ...(response.modelId === undefined ? {} : { model: response.modelId }),
  };
}

/**
 * A Model that sends every call over HTTP: `script` decides what the server answers (its response
 * becomes the next queued reply, JSON for generate, SSE for stream), and `http` (fromAISDK pointed
 * at `server`) makes the call, so the interpreter only ever sees what came back through the
 * provider package. `script` still records every request, so a scenario can inspect them.
 */
export function overHttp(script: Model, http: Model, server: FakeOpenAIServer): Model {
  return {
    async generate(request, options) {
      server.reply(wireReply('json', replyFor(await script.generate(request, options))));
      return http.generate(request, options);
    },
    async *stream(request, options) {
      server.reply(wireReply('sse', replyFor(await script.generate(request, options))));
      yield* http.stream!(request, options);
    },
  };
}

function pieces(text: string, size: number): string[] {
  const out: string[] = [];
  for (let at = 0; at < text.length; at += size) out.push(text.slice(at, at + size));
  return out.length > 0 ? out : [''];
}
