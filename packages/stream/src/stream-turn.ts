// streamTurn: @turnkit/inline's runTurn, with the handlers that stream. The driver loop, the
// option handling, approvals and the result shape are inline's (one implementation), and retries
// are core's; this file only replaces the model call (stream and aggregate instead of generate)
// and taps the observer effects (append, emit) and tool results to hand events to the reader.
import { toTurnError, type ParkedCall, type ToolResult } from '@turnkit/core';
import { resumeTurn, runTurn, type ResumeTurnOptions, type RunTurnOptions, type TurnResult } from '@turnkit/inline';
import { defaultHandlers, modelRequestFor, type EffectHandlers, type HandlerContext } from '@turnkit/inline/driver';
import type { TurnStreamEvent } from './events.js';
import type { EventSink } from './handoff.js';
import { streamModelResponse } from './model-call.js';
import { TurnStream } from './turn-stream.js';

/** The options of `streamTurn`: exactly `runTurn`'s (tools, hooks, `wrapExecution`, limits, …). */
export type StreamTurnOptions = RunTurnOptions;

/**
 * Runs a turn like `runTurn` (same options, same result) and streams it as it happens.
 *
 * @example
 * const stream = streamTurn({ model, tools: [add], input: 'What is 1 + 2?' });
 * for await (const event of stream) if (event.type === 'text_delta') process.stdout.write(event.text);
 * const result = await stream.result; // equal to what runTurn returns
 */
export function streamTurn(options: StreamTurnOptions): TurnStream<TurnResult> {
  return new TurnStream(
    (sink, signal) => finishWithDone(runTurn({ ...options, signal }, streamingHandlers(sink)), sink),
    streamOptions(options),
  );
}

/** Continues a suspended turn like `resumeTurn` (same options, same result), streamed. */
export function resumeStreamTurn(options: ResumeTurnOptions): TurnStream<TurnResult> {
  return new TurnStream(
    (sink, signal) => finishWithDone(resumeTurn({ ...options, signal }, streamingHandlers(sink)), sink),
    streamOptions(options),
  );
}

function streamOptions(options: RunTurnOptions | ResumeTurnOptions): ConstructorParameters<typeof TurnStream>[1] {
  // Without `approve`, `awaiting_approval` is the last event: the turn suspends right after it, and
  // a reader that stops there must not turn the suspension into a cancellation.
  const suspends = options?.approve === undefined;
  return {
    signal: options?.signal,
    isLast: (event) => event.type === 'done' || (suspends && event.type === 'awaiting_approval'),
  };
}

async function finishWithDone(run: Promise<TurnResult>, sink: EventSink<TurnStreamEvent>): Promise<TurnResult> {
  const result = await run;
  // Not awaited: the result must not wait for a reader that stops at the last event it needs.
  if (result.outcome !== undefined) void sink.send({ type: 'done', outcome: result.outcome });
  return result;
}

/**
 * inline's handlers with streaming added: the model call streams its parts into `sink`, and every
 * appended message, notice and tool result becomes an event. Each handler waits until the reader
 * took its event, which is how a slow reader slows the turn down.
 */
export function streamingHandlers(sink: EventSink<TurnStreamEvent>, base: EffectHandlers = defaultHandlers): EffectHandlers {
  // A tool result is announced once: when the dispatcher reports it, or else when it is appended
  // (by turn and call id: a child turn's call ids are its own).
  const announced = new Set<string>();
  // In a multi-agent turn every event carries the path of the agent it is about (the context's).
  const sinkFor = (ctx: HandlerContext): EventSink<TurnStreamEvent> => {
    const agentPath = ctx.agentPath;
    return agentPath === undefined ? sink : { send: (event) => sink.send({ ...event, agentPath }) };
  };
  const send = async (ctx: HandlerContext, event: TurnStreamEvent): Promise<void> => {
    const taken = sinkFor(ctx).send(event);
    if (taken !== undefined) await taken;
  };
  const announce = (ctx: HandlerContext, result: ToolResult): Promise<void> | undefined => {
    const key = JSON.stringify([ctx.turnId, result.callId]);
    if (announced.has(key)) return undefined;
    announced.add(key);
    return sinkFor(ctx).send({ type: 'tool_result', result });
  };
  // The same context with `onToolResult` set: the driver hands it to the dispatcher as `onResult`,
  // so parallel results reach the reader in completion order.
  const reporting = (ctx: HandlerContext): HandlerContext => ({
    ...ctx,
    onToolResult: (result: ToolResult) => void announce(ctx, result),
  });

  return {
    ...base,
    async append(effect, ctx) {
      await base.append(effect, ctx);
      const message = effect.message;
      if (message.role === 'tool') {
        const taken = announce(ctx, message.result);
        if (taken !== undefined) await taken;
      }
      await send(ctx, { type: 'message', message });
    },
    async emit(effect, ctx) {
      await base.emit(effect, ctx);
      await send(ctx, { type: 'notice', notice: effect.notice });
      if (effect.notice.name === 'awaiting_approval')
        await send(ctx, { type: 'awaiting_approval', pending: pendingOf(effect.notice.data) });
    },
    async call_llm(effect, ctx) {
      const request = modelRequestFor(effect.request, ctx.transcript, ctx.dispatcher.toolSpecs(), ctx);
      // Whether part of the reply reached the reader: core never retries such a call.
      let sent = false;
      const target = sinkFor(ctx);
      const counted: EventSink<TurnStreamEvent> = {
        send(event) {
          sent = true;
          return target.send(event);
        },
      };
      try {
        return {
          type: 'model_responded',
          response: await streamModelResponse(ctx.model, request, { signal: ctx.signal }, counted),
        };
      } catch (error) {
        return sent
          ? { type: 'model_failed', error: toTurnError(error), partialOutput: true }
          : { type: 'model_failed', error: toTurnError(error) };
      }
    },
    dispatch_tools(effect, ctx) {
      return base.dispatch_tools(effect, reporting(ctx));
    },
    execute_approved(effect, ctx) {
      return base.execute_approved(effect, reporting(ctx));
    },
  };
}

function pendingOf(data: unknown): readonly ParkedCall[] {
  const pending = data !== null && typeof data === 'object' ? (data as { pending?: unknown }).pending : undefined;
  return Array.isArray(pending) ? (pending as ParkedCall[]) : [];
}
