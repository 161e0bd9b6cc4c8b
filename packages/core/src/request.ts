// Helpers every interpreter needs, kept here so no interpreter carries its own copy.
import type { BlockingEffect, CallModelRequest, Effect, Message, ModelRequest, ToolSpec } from './types.js';

const BLOCKING = new Set<Effect['type']>(['call_model', 'dispatch_tools', 'execute_approved', 'compact', 'check_output', 'done']);

/** True for the effect types after which an interpreter feeds back one event (`done` included). */
export function isBlocking(effect: Effect): effect is BlockingEffect {
  return BLOCKING.has(effect.type);
}

/**
 * The request a model sees for a `call_model` effect: the transcript so far, and the tools unless
 * the call is a forced final one (then no tools and `toolChoice: 'none'`).
 */
export function buildModelRequest(
  request: CallModelRequest,
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
