// The spans of one activation of a turn, kept as the interpreter reports effects, transitions and
// tool executions. Every method swallows its own faults (core's `quietly`): telemetry never breaks
// a turn.

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
import type { ExecutionOutcome, ToolExecution } from '@turnkit/dispatch/internal';
import type { Effect, Message, ModelResponse, TraceEntry, TurnError } from '@turnkit/core';
import { quietly } from '@turnkit/core/internal';
import { ATTR, OPERATION, TURNKIT_ATTR } from './conventions.js';
import { answerMessage, chatMessage, finishReason, replyMessage } from './genai.js';
import { readTraceContext, type SavedTraceContext, saveTraceContext } from './trace-context.js';

/** What an activation is told once, when it is made. */
export interface ActivationSettings {
  readonly agent: string;
  readonly model: string | undefined;
  readonly provider: string | undefined;
  readonly tracer: Tracer;
  readonly content: boolean;
  readonly link: unknown;
  readonly transcript: readonly Message[];
  readonly parent: Context | undefined;
  /** The turn's id when it is known up front (a child turn's: `<parent id>/<call id>`). */
  readonly turnId?: string;
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

export class Activation {
  readonly #s: ActivationSettings;
  readonly #transcript: Message[];
  #turnId: string | undefined;
  #agent: Span | undefined;
  #agentContext: Context | undefined;
  #chat: Span | undefined;
  /**
   * The `execute_tool` spans of `transfer_task` calls whose child turn has not ended, by call id:
   * they stay open so the child's `invoke_agent` span sits under them, and end with the child.
   */
  readonly #transfers = new Map<string, { readonly span: Span; readonly context: Context }>();
  /** The activations of this turn's child turns, by `transfer_task` call id. */
  readonly #children = new Map<string, Activation>();

  constructor(settings: ActivationSettings) {
    this.#s = settings;
    this.#transcript = [...settings.transcript];
    this.#turnId = settings.turnId;
  }

  /** The `invoke_agent` span's context, starting the span on first use (linked to a saved context). */
  agentContext(): Context {
    if (this.#agentContext !== undefined) return this.#agentContext;
    const s = this.#s;
    const parent = s.parent ?? otelContext.active();
    const attributes: Attributes = { [ATTR.operationName]: OPERATION.invokeAgent, [ATTR.agentName]: s.agent };
    if (s.provider !== undefined) attributes[ATTR.providerName] = s.provider;
    if (s.model !== undefined) attributes[ATTR.requestModel] = s.model;
    if (this.#turnId !== undefined) attributes[ATTR.conversationId] = this.#turnId;
    const links: Link[] = [];
    if (s.link !== undefined) {
      const saved = readTraceContext(s.link);
      if (saved.ok) links.push({ context: saved.context, attributes: { [TURNKIT_ATTR.linkReason]: 'resumed' } });
      else attributes[TURNKIT_ATTR.linkError] = saved.reason;
    }
    const span = s.tracer.startSpan(
      `${OPERATION.invokeAgent} ${s.agent}`,
      { kind: SpanKind.INTERNAL, attributes, links },
      parent,
    );
    this.#agent = span;
    this.#agentContext = trace.setSpan(parent, span);
    return this.#agentContext;
  }

  /** The saved form of the `invoke_agent` span's context; undefined before it starts, or without an SDK. */
  traceContext(): SavedTraceContext | undefined {
    const span = this.#agentContext === undefined ? undefined : trace.getSpan(this.#agentContext);
    // Without an SDK the span is a no-op with an all-zero context: nothing to link to later.
    return span === undefined || !isSpanContextValid(span.spanContext()) ? undefined : saveTraceContext(span.spanContext());
  }

  #setTurnId(id: string): void {
    if (this.#turnId !== undefined) return;
    this.#turnId = id;
    this.#agent?.setAttribute(ATTR.conversationId, id);
  }

  #startChat(effect: Extract<Effect, { type: 'call_llm' }>): void {
    const parent = this.agentContext();
    this.#endChat(undefined, { kind: 'interrupted', message: 'a new model call started before this one reported' });
    const s = this.#s;
    const model = effect.request.modelOverride ?? s.model;
    const attributes: Attributes = { [ATTR.operationName]: OPERATION.chat, [TURNKIT_ATTR.iteration]: effect.request.iteration };
    if (model !== undefined) attributes[ATTR.requestModel] = model;
    if (s.provider !== undefined) attributes[ATTR.providerName] = s.provider;
    if (this.#turnId !== undefined) attributes[ATTR.conversationId] = this.#turnId;
    if (effect.request.attempt !== undefined) attributes[TURNKIT_ATTR.modelAttempt] = effect.request.attempt;
    if (s.content) attributes[ATTR.inputMessages] = json(this.#transcript.map(chatMessage));
    const name = model === undefined ? OPERATION.chat : `${OPERATION.chat} ${model}`;
    this.#chat = s.tracer.startSpan(name, { kind: SpanKind.CLIENT, attributes }, parent);
  }

  #endChat(response: ModelResponse | undefined, error: TurnError | undefined): void {
    const span = this.#chat;
    if (span === undefined) return;
    this.#chat = undefined;
    if (this.#turnId !== undefined) span.setAttribute(ATTR.conversationId, this.#turnId);
    if (response !== undefined) {
      if (response.modelId !== undefined) span.setAttribute(ATTR.responseModel, response.modelId);
      if (response.finishReason !== undefined)
        span.setAttribute(ATTR.responseFinishReasons, [finishReason(response.finishReason)]);
      if (response.usage?.inputTokens !== undefined) span.setAttribute(ATTR.usageInputTokens, response.usage.inputTokens);
      if (response.usage?.outputTokens !== undefined) span.setAttribute(ATTR.usageOutputTokens, response.usage.outputTokens);
      if (this.#s.content) span.setAttribute(ATTR.outputMessages, json([replyMessage(response)]));
    }
    if (error !== undefined) failSpan(span, error.kind, error.message);
    span.end();
  }

  /** The turn's outcome on `invoke_agent`, which then ends. */
  #done(outcome: Extract<Effect, { type: 'done' }>['outcome']): void {
    const span = this.#agent;
    if (span === undefined) return;
    span.setAttribute(TURNKIT_ATTR.turnStatus, outcome.status);
    if (outcome.status === 'stopped') {
      span.setAttribute(TURNKIT_ATTR.stopReason, outcome.stopReason);
      if (this.#s.content) span.setAttribute(ATTR.outputMessages, json([answerMessage(outcome.output)]));
    } else if (outcome.status === 'failed') failSpan(span, outcome.error.kind, outcome.error.message);
    else failSpan(span, 'cancelled', outcome.reason);
    this.end();
  }

  /** The activation of the child turn of the `transfer_task` call `callId`, under that call's `execute_tool` span. */
  #child(callId: string, agent: string): Activation {
    let child = this.#children.get(callId);
    if (child === undefined) {
      const s = this.#s;
      child = new Activation({
        agent,
        model: undefined,
        provider: s.provider,
        tracer: s.tracer,
        content: s.content,
        link: undefined,
        transcript: [],
        parent: (this.#transfers.get(callId) ?? this.#goingOnTransfer(callId)).context,
        ...(this.#turnId === undefined ? {} : { turnId: `${this.#turnId}/${callId}` }),
      });
      this.#children.set(callId, child);
    }
    return child;
  }

  /**
   * The `execute_tool` span of a `transfer_task` call that ran in an earlier activation (the tree
   * parked in its child, or waited for a retry): opened again under this activation's
   * `invoke_agent`, so the child's span sits under its call here as in the activation the call ran
   * in, and ended with the child (or this activation) as that one is.
   */
  #goingOnTransfer(callId: string): { readonly span: Span; readonly context: Context } {
    const parent = this.agentContext();
    const span = this.#s.tracer.startSpan(
      `${OPERATION.executeTool} transfer_task`,
      {
        kind: SpanKind.INTERNAL,
        attributes: {
          [ATTR.operationName]: OPERATION.executeTool,
          [ATTR.toolName]: 'transfer_task',
          [ATTR.toolCallId]: callId,
          [ATTR.toolType]: 'function',
          ...(this.#turnId === undefined ? {} : { [ATTR.conversationId]: this.#turnId }),
        },
      },
      parent,
    );
    const transfer = { span, context: trace.setSpan(parent, span) };
    this.#transfers.set(callId, transfer);
    return transfer;
  }

  /** The child turn of `callId` ended: its span is ended (by its `done`), and the `execute_tool` span of its call too. */
  #endTransfer(callId: string): void {
    this.#children.delete(callId);
    const transfer = this.#transfers.get(callId);
    this.#transfers.delete(callId);
    transfer?.span.end();
  }

  onEffect(effect: Effect): void {
    quietly(() => {
      this.agentContext();
      if (effect.type === 'child') {
        this.#child(effect.callId, effect.agent).onEffect(effect.effect);
        if (effect.effect.type === 'done') this.#endTransfer(effect.callId);
        return;
      }
      if (effect.type === 'append') this.#transcript.push(effect.message);
      else if (effect.type === 'call_llm') this.#startChat(effect);
      else if (effect.type === 'done') this.#done(effect.outcome);
    });
  }

  onStep(record: TraceEntry): void {
    quietly(() => {
      this.agentContext();
      this.#setTurnId(record.state.id);
      const event = record.event;
      if (event.type === 'child') {
        // The child's own record: its state while it runs (an ended child's is gone from the parent's).
        const childState = record.state.agents?.child ?? ({ id: `${record.state.id}/${event.callId}` } as TraceEntry['state']);
        this.#children.get(event.callId)?.onStep({ event: event.event, state: childState, effects: [] });
        return;
      }
      if (event.type === 'start' && this.#s.content && event.input !== undefined)
        this.#agent?.setAttribute(ATTR.inputMessages, json([chatMessage({ role: 'user', content: event.input })]));
      else if (event.type === 'model_responded') this.#endChat(event.response, undefined);
      else if (event.type === 'model_failed') this.#endChat(undefined, event.error);
      else if (event.type === 'cancel') this.#endChat(undefined, { kind: 'cancelled', message: event.reason ?? 'cancelled' });
    });
  }

  /** An `execute_tool` span around one tool execution; the tool runs inside its context. */
  async wrapExecution(execution: ToolExecution, run: () => Promise<ExecutionOutcome>): Promise<unknown> {
    // A child turn's tool (its turn id is `<this turn's id>/<call id>…`): its span is the child's.
    const child = this.#childOf(execution.turnId);
    if (child !== undefined) return child.wrapExecution(execution, run);
    let span: Span | undefined;
    let context: Context | undefined;
    quietly(() => {
      const parent = this.agentContext();
      this.#setTurnId(execution.turnId);
      const attributes: Attributes = {
        [ATTR.operationName]: OPERATION.executeTool,
        [ATTR.toolName]: execution.tool,
        [ATTR.toolCallId]: execution.call.id,
        [ATTR.toolType]: 'function',
        [ATTR.conversationId]: execution.turnId,
      };
      if (this.#s.content) attributes[ATTR.toolCallArguments] = json(execution.input);
      span = this.#s.tracer.startSpan(
        `${OPERATION.executeTool} ${execution.tool}`,
        { kind: SpanKind.INTERNAL, attributes },
        parent,
      );
      context = trace.setSpan(parent, span);
    });
    // Spans the tool starts (an HTTP call, a query) are children of its execute_tool span.
    const outcome = context === undefined ? await run() : await otelContext.with(context, run);
    quietly(() => {
      // A transfer_task call that ran starts a child turn: its span stays open until the child ends.
      if (execution.tool === 'transfer_task' && !outcome.isError && span !== undefined && context !== undefined) {
        span.setAttribute(TURNKIT_ATTR.toolAttempts, outcome.attempts);
        this.#transfers.set(execution.call.id, { span, context });
      } else this.#endTool(span, outcome);
    });
    return outcome;
  }

  #childOf(turnId: string): Activation | undefined {
    if (this.#turnId === undefined || turnId === this.#turnId) return undefined;
    for (const [callId, child] of this.#children) {
      const id = `${this.#turnId}/${callId}`;
      if (turnId === id || turnId.startsWith(`${id}/`)) return child;
    }
    return undefined;
  }

  #endTool(span: Span | undefined, outcome: ExecutionOutcome): void {
    if (span === undefined) return;
    span.setAttribute(TURNKIT_ATTR.toolAttempts, outcome.attempts);
    if (this.#s.content) span.setAttribute(ATTR.toolCallResult, json(outcome.output));
    if (outcome.isError) {
      // The error text may quote the input or the output: it is content, recorded only on opt-in.
      const kind = outcome.errorKind ?? 'tool_error';
      failSpan(span, kind, this.#s.content && typeof outcome.output === 'string' ? outcome.output : `the tool failed (${kind})`);
    }
    span.end();
  }

  /** Marks a failure of the activation itself (the interpreter threw). */
  fail(error: unknown): void {
    quietly(() => {
      if (this.#agent !== undefined) failSpan(this.#agent, 'exception', error instanceof Error ? error.message : String(error));
    });
  }

  /** Ends what is still open; a suspended activation says so on its span. Idempotent. */
  end(status?: string): void {
    quietly(() => {
      this.#endChat(undefined, { kind: 'interrupted', message: 'the activation ended before the model call reported' });
      // A suspended tree: the children's spans end with the parent's (a resumed activation starts new ones).
      for (const [callId, child] of this.#children) {
        child.end(status);
        this.#endTransfer(callId);
      }
      for (const callId of [...this.#transfers.keys()]) this.#endTransfer(callId);
      const span = this.#agent;
      if (span === undefined) return;
      this.#agent = undefined;
      if (status === 'suspended') span.setAttribute(TURNKIT_ATTR.turnStatus, 'suspended');
      span.end();
    });
  }
}
