// Spans for one activation of a turn (one runTurn / resumeTurn / streamTurn call), built from the
// interpreter's observers: `onEffect` sees each effect before it is performed, `onStep` each
// transition. `invoke_agent` covers the activation, `chat` each model call, `execute_tool` each
// tool execution (through the dispatcher's execution wrapper, `wrapExecution`). Telemetry never breaks a turn: the
// observers swallow their own faults, as the interpreters do for any observer.

import {
  type Attributes,
  type Context,
  context as otelContext,
  isSpanContextValid,
  type Link,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import type { Effect, Message, ModelResponse, TraceEntry, TurnError } from '@turnkit/core';
import type { ExecutionOutcome, ExecutionWrapper, ToolExecution } from '@turnkit/dispatch';
import { ATTR, OPERATION, TURNKIT_ATTR } from './conventions.js';
import { readTraceContext, type SavedTraceContext, saveTraceContext } from './trace-context.js';

export interface TraceTurnOptions {
  /** The agent's name: `invoke_agent {agent}`, `gen_ai.agent.name`. */
  readonly agent: string;
  /** The model's name for `chat {model}` and `gen_ai.request.model` (a tool's model override wins for its call). */
  readonly model?: string;
  /** `gen_ai.provider.name`, like `openai` or `anthropic`. */
  readonly provider?: string;
  /** Default: `trace.getTracer('@turnkit/otel')` (the global provider). */
  readonly tracer?: Tracer;
  /** Record messages, tool inputs and results on the spans. Off by default: they may hold personal data. */
  readonly recordContent?: boolean;
  /** The trace context saved when this turn last suspended: the new `invoke_agent` span links to it. */
  readonly link?: SavedTraceContext | unknown;
  /** Earlier messages (a resumed turn's transcript), for `gen_ai.input.messages` when content is recorded. */
  readonly transcript?: readonly Message[];
  /** Parent of the `invoke_agent` span. Default: the active context when the span starts. */
  readonly parent?: Context;
}

/** The observers to pass to the interpreter, as options: `runTurn({ ...options, ...tracing.hooks })`. */
export interface TurnHooks {
  readonly onEffect: (effect: Effect) => void;
  readonly onStep: (record: TraceEntry) => void;
  /** The dispatcher's execution wrapper: an `execute_tool` span around each tool execution, the tool running in its context. */
  readonly wrapExecution: ExecutionWrapper;
}

/** What an activation's result says about how it ended (`runTurn`'s result has these fields). */
export interface ActivationEnd {
  readonly status: string;
}

export interface TurnTracing {
  readonly hooks: TurnHooks;
  /** The `invoke_agent` span's context once it started (undefined without an SDK): save it with a suspended turn, pass it back as `link`. */
  traceContext(): SavedTraceContext | undefined;
  /** Runs `activation` inside the `invoke_agent` span's context and ends the span with its result. */
  run<T extends ActivationEnd>(activation: () => Promise<T>): Promise<T>;
  /** Ends the spans still open (a suspended turn ends here). Called by `run`; idempotent. */
  end(result?: ActivationEnd): void;
}

interface Open {
  turnId: string | undefined;
  agent: Span | undefined;
  agentContext: Context | undefined;
  chat: Span | undefined;
  transcript: Message[];
}

/** Errors of a telemetry observer are its own: they never reach the turn. */
function quietly(fn: () => void): void {
  try {
    fn();
  } catch {
    // Telemetry must not break a turn.
  }
}

function json(value: unknown): string {
  try {
    return JSON.stringify(value) ?? 'null';
  } catch {
    return '"[unserialisable]"';
  }
}

/** A span ended with an error: `error.type` (low cardinality, a turnkit error kind) and an ERROR status. */
export function failSpan(span: Span, kind: string, message: string): void {
  span.setAttribute(ATTR.errorType, kind);
  span.setStatus({ code: SpanStatusCode.ERROR, message });
}

/**
 * Traces one activation of a turn.
 *
 * @example
 * const tracing = traceTurn({ agent: 'support', model: 'gpt-4.1-mini' });
 * const result = await tracing.run(() => runTurn({ model, tools, input, ...tracing.hooks }));
 */
export function traceTurn(options: TraceTurnOptions): TurnTracing {
  if (options === null || typeof options !== 'object' || typeof options.agent !== 'string' || options.agent === '')
    throw new TypeError('traceTurn needs { agent }: the agent name that titles the invoke_agent span.');
  const tracer = options.tracer ?? trace.getTracer('@turnkit/otel');
  const content = options.recordContent === true;
  const open: Open = {
    turnId: undefined,
    agent: undefined,
    agentContext: undefined,
    chat: undefined,
    transcript: [...(options.transcript ?? [])],
  };

  const startAgent = (): Context => {
    if (open.agentContext !== undefined) return open.agentContext;
    const parent = options.parent ?? otelContext.active();
    const attributes: Attributes = { [ATTR.operationName]: OPERATION.invokeAgent, [ATTR.agentName]: options.agent };
    if (options.provider !== undefined) attributes[ATTR.providerName] = options.provider;
    if (options.model !== undefined) attributes[ATTR.requestModel] = options.model;
    const links: Link[] = [];
    let linkError: string | undefined;
    if (options.link !== undefined) {
      const saved = readTraceContext(options.link);
      if (saved.ok) links.push({ context: saved.context, attributes: { [TURNKIT_ATTR.linkReason]: 'resumed' } });
      else linkError = saved.reason;
    }
    if (linkError !== undefined) attributes[TURNKIT_ATTR.linkError] = linkError;
    const span = tracer.startSpan(
      `${OPERATION.invokeAgent} ${options.agent}`,
      { kind: SpanKind.INTERNAL, attributes, links },
      parent,
    );
    open.agent = span;
    open.agentContext = trace.setSpan(parent, span);
    return open.agentContext;
  };

  const setTurnId = (id: string): void => {
    if (open.turnId !== undefined) return;
    open.turnId = id;
    open.agent?.setAttribute(ATTR.conversationId, id);
  };

  const startChat = (effect: Extract<Effect, { type: 'call_model' }>): void => {
    const parent = startAgent();
    endChat(undefined, { kind: 'interrupted', message: 'a new model call started before this one reported' });
    const model = effect.request.modelOverride ?? options.model;
    const attributes: Attributes = {
      [ATTR.operationName]: OPERATION.chat,
      [TURNKIT_ATTR.iteration]: effect.request.iteration,
    };
    if (model !== undefined) attributes[ATTR.requestModel] = model;
    if (options.provider !== undefined) attributes[ATTR.providerName] = options.provider;
    if (open.turnId !== undefined) attributes[ATTR.conversationId] = open.turnId;
    if (effect.request.attempt !== undefined) attributes[TURNKIT_ATTR.modelAttempt] = effect.request.attempt;
    if (content) attributes[ATTR.inputMessages] = json(open.transcript);
    open.chat = tracer.startSpan(
      model === undefined ? OPERATION.chat : `${OPERATION.chat} ${model}`,
      { kind: SpanKind.CLIENT, attributes },
      parent,
    );
  };

  const endChat = (response: ModelResponse | undefined, error: TurnError | undefined): void => {
    const span = open.chat;
    if (span === undefined) return;
    open.chat = undefined;
    if (open.turnId !== undefined) span.setAttribute(ATTR.conversationId, open.turnId);
    if (response !== undefined) {
      if (response.modelId !== undefined) span.setAttribute(ATTR.responseModel, response.modelId);
      if (response.finishReason !== undefined) span.setAttribute(ATTR.responseFinishReasons, [response.finishReason]);
      if (response.usage?.inputTokens !== undefined) span.setAttribute(ATTR.usageInputTokens, response.usage.inputTokens);
      if (response.usage?.outputTokens !== undefined) span.setAttribute(ATTR.usageOutputTokens, response.usage.outputTokens);
      if (content)
        span.setAttribute(
          ATTR.outputMessages,
          json([{ role: 'assistant', content: response.text, toolCalls: response.toolCalls }]),
        );
    }
    if (error !== undefined) failSpan(span, error.kind, error.message);
    span.end();
  };

  const wrapExecution = async (execution: ToolExecution, run: () => Promise<ExecutionOutcome>): Promise<unknown> => {
    let span: Span | undefined;
    let context: Context | undefined;
    quietly(() => {
      const parent = startAgent();
      setTurnId(execution.turnId);
      const attributes: Attributes = {
        [ATTR.operationName]: OPERATION.executeTool,
        [ATTR.toolName]: execution.tool,
        [ATTR.toolCallId]: execution.call.id,
        [ATTR.toolType]: 'function',
        [ATTR.conversationId]: execution.turnId,
      };
      if (content) attributes[ATTR.toolCallArguments] = json(execution.input);
      span = tracer.startSpan(`${OPERATION.executeTool} ${execution.tool}`, { kind: SpanKind.INTERNAL, attributes }, parent);
      context = trace.setSpan(parent, span);
    });
    // The tool runs inside the span's context, so spans it makes (an HTTP call, a query) are its children.
    const outcome = context === undefined ? await run() : await otelContext.with(context, run);
    quietly(() => {
      if (span === undefined) return;
      span.setAttribute(TURNKIT_ATTR.toolAttempts, outcome.attempts);
      if (content) span.setAttribute(ATTR.toolCallResult, json(outcome.output));
      // The error text may quote the input or the output: it is content, recorded only on opt-in.
      const kind = outcome.errorKind ?? 'tool_error';
      if (outcome.isError)
        failSpan(span, kind, content && typeof outcome.output === 'string' ? outcome.output : `the tool failed (${kind})`);
      span.end();
    });
    return outcome;
  };

  const onEffect = (effect: Effect): void =>
    quietly(() => {
      startAgent();
      if (effect.type === 'append') open.transcript.push(effect.message);
      else if (effect.type === 'call_model') startChat(effect);
      else if (effect.type === 'done') {
        const outcome = effect.outcome;
        const span = open.agent;
        if (span === undefined) return;
        span.setAttribute(TURNKIT_ATTR.turnStatus, outcome.status);
        if (outcome.status === 'stopped') {
          span.setAttribute(TURNKIT_ATTR.stopReason, outcome.stopReason);
          if (content) span.setAttribute(ATTR.outputMessages, json([{ role: 'assistant', content: outcome.output }]));
        } else if (outcome.status === 'failed') failSpan(span, outcome.error.kind, outcome.error.message);
        else failSpan(span, 'cancelled', outcome.reason);
        end();
      }
    });

  const onStep = (record: TraceEntry): void =>
    quietly(() => {
      startAgent();
      setTurnId(record.state.id);
      const event = record.event;
      if (event.type === 'start' && content && event.input !== undefined)
        open.agent?.setAttribute(ATTR.inputMessages, json([{ role: 'user', content: event.input }]));
      else if (event.type === 'model_responded') endChat(event.response, undefined);
      else if (event.type === 'model_failed') endChat(undefined, event.error);
      else if (event.type === 'cancel') endChat(undefined, { kind: 'cancelled', message: event.reason ?? 'cancelled' });
    });

  const end = (result?: ActivationEnd): void =>
    quietly(() => {
      endChat(undefined, { kind: 'interrupted', message: 'the activation ended before the model call reported' });
      const span = open.agent;
      if (span === undefined) return;
      open.agent = undefined;
      if (result !== undefined && result.status === 'suspended') span.setAttribute(TURNKIT_ATTR.turnStatus, 'suspended');
      span.end();
    });

  return {
    hooks: { onEffect, onStep, wrapExecution },
    traceContext: () => {
      const span = open.agentContext === undefined ? undefined : trace.getSpan(open.agentContext);
      // Without an SDK the span is a no-op with an all-zero context: nothing to link to later.
      return span === undefined || !isSpanContextValid(span.spanContext()) ? undefined : saveTraceContext(span.spanContext());
    },
    async run<T extends ActivationEnd>(activation: () => Promise<T>): Promise<T> {
      const ctx = startAgent();
      try {
        const result = await otelContext.with(ctx, activation);
        end(result);
        return result;
      } catch (error) {
        quietly(() => {
          if (open.agent !== undefined) failSpan(open.agent, 'exception', error instanceof Error ? error.message : String(error));
        });
        end();
        throw error;
      }
    },
    end,
  };
}
