// traceTurn: spans for one activation of a turn (one runTurn / resumeTurn / streamTurn call), built
// from the interpreter's observers (`onEffect` sees each effect before it is performed, `onStep`
// each transition) and the dispatcher's execution wrapper (`wrapExecution`). `invoke_agent`
// covers the activation, `chat` each model call, `execute_tool` each tool execution.

import { type Context, context as otelContext, type Tracer, trace } from '@opentelemetry/api';
import type { ExecutionWrapper } from '@turnkit/dispatch/internal';
import type { Effect, Message, TraceEntry } from '@turnkit/core';
import { Activation } from './activation.js';
import { type ModelIdentity, providerName } from './genai.js';
import type { SavedTraceContext } from './trace-context.js';

/** The options of `traceTurn`: the names its spans carry and where they go. */
export interface TraceTurnOptions {
  /** The agent's name: `invoke_agent {agent}`, `gen_ai.agent.name`. */
  readonly agent: string;
  /**
   * The model: its name (for `chat {model}` and `gen_ai.request.model`; a tool's model override
   * wins for its call), or the AI SDK model itself (`openai('gpt-4.1-mini')`), whose `modelId` is the
   * name and whose `provider` gives `gen_ai.provider.name` (`openai.chat` → `openai`).
   */
  readonly model?: string | ModelIdentity;
  /** `gen_ai.provider.name`, like `openai` or `anthropic`. Default: from `model` when it is a model object. */
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
  const identity = modelIdentity(options.model);
  const activation = new Activation({
    agent: options.agent,
    model: identity?.modelId ?? (typeof options.model === 'string' ? options.model : undefined),
    provider: options.provider ?? (identity === undefined ? undefined : providerName(identity.provider)),
    tracer: options.tracer ?? trace.getTracer('@turnkit/otel'),
    content: options.recordContent === true,
    link: options.link,
    transcript: options.transcript ?? [],
    parent: options.parent,
  });
  const end = (result?: ActivationEnd): void => activation.end(result?.status);
  return {
    hooks: {
      onEffect: (effect) => activation.onEffect(effect),
      onStep: (record) => activation.onStep(record),
      wrapExecution: (execution, run) => activation.wrapExecution(execution, run),
    },
    traceContext: () => activation.traceContext(),
    async run<T extends ActivationEnd>(fn: () => Promise<T>): Promise<T> {
      try {
        const result = await otelContext.with(activation.agentContext(), fn);
        end(result);
        return result;
      } catch (error) {
        activation.fail(error);
        end();
        throw error;
      }
    },
    end,
  };
}

/** The model object's provider and id, checked; undefined for a name or no model. */
function modelIdentity(model: unknown): ModelIdentity | undefined {
  if (model === undefined || typeof model === 'string') return undefined;
  const { provider, modelId } = (model ?? {}) as Partial<Record<keyof ModelIdentity, unknown>>;
  if (typeof provider !== 'string' || provider === '' || typeof modelId !== 'string' || modelId === '')
    throw new TypeError(
      `traceTurn: model must be the model's name or a model object with a provider and a modelId (an AI SDK model); got a ${typeof model} with provider ${typeof provider} and modelId ${typeof modelId}.`,
    );
  return { provider, modelId };
}
