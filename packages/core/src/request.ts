// Helpers every interpreter needs, kept here so no interpreter carries its own copy.
import type { BlockingEffect, CallLlmRequest, Effect, Message, ModelRequest, ToolSpec } from './types.js';

/** True for the effect types after which an interpreter feeds back one event (`done` included). */
export function isBlocking(effect: Effect): effect is BlockingEffect {
  switch (effect.type) {
    case 'call_llm':
    case 'dispatch_tools':
    case 'execute_approved':
    case 'compact':
    case 'check_output':
    case 'done':
      return true;
    // A child turn's effect blocks as it would in the child, but for its `done`: the parent goes on.
    case 'child':
      return effect.effect.type !== 'done' && isBlocking(effect.effect);
    default:
      return false;
  }
}

/**
 * The request a model sees for a `call_llm` effect: the transcript so far, and the tools unless
 * the call is a forced final one (then no tools and `toolChoice: 'none'`).
 */
export function buildModelRequest(
  request: CallLlmRequest,
  messages: readonly Message[],
  tools: readonly ToolSpec[],
): ModelRequest {
  const base = {
    messages,
    tools: request.final ? [] : tools,
    toolChoice: request.final ? ('none' as const) : ('auto' as const),
    iteration: request.iteration,
  };
  return request.modelOverride === undefined ? base : { ...base, modelOverride: request.modelOverride };
}
