// What a consumer of a streamed turn sees. Every event is plain JSON, so it can be sent as one
// server-sent event (`event: <type>`, `data: <the event as JSON>`) and parsed back unchanged.
import type { Message, Notice, Outcome, ParkedCall, ToolCall, ToolResult } from '@turnkit/core';

/**
 * What a streamed turn yields, in order: text and reasoning deltas, complete tool calls and their results, transcript
 * messages, notices (`event.notice.name`), calls awaiting approval, and `done` with the outcome. Narrow on `type`.
 */
export type TurnStreamEvent = TurnStreamEventBody & {
  /**
   * In a multi-agent turn, the agents from the turn's own to the one the event is about
   * (`['supervisor', 'researcher']` for the child turn of a `transfer_task` call); absent otherwise.
   */
  readonly agentPath?: readonly string[];
};

/** The events of a streamed turn, before the agent path (`TurnStreamEvent`). */
export type TurnStreamEventBody =
  /** A piece of the model's answer text, as the model produced it. */
  | { readonly type: 'text_delta'; readonly text: string }
  /** A piece of the model's reasoning text. */
  | { readonly type: 'reasoning_delta'; readonly text: string }
  /** A tool call whose arguments are complete (`inputError` set when they were not JSON). */
  | { readonly type: 'tool_call'; readonly call: ToolCall }
  /** A tool result, as soon as that tool finished (parallel calls arrive in completion order). */
  | { readonly type: 'tool_result'; readonly result: ToolResult }
  /** A message appended to the transcript (in transcript order). */
  | { readonly type: 'message'; readonly message: Message }
  /** A notice of the turn machine (`turn_started`, `iteration`, `steering`, …). */
  | { readonly type: 'notice'; readonly notice: Notice }
  /** Calls wait for a person's decision; without `approve`, this is the last event (the turn is suspended). */
  | { readonly type: 'awaiting_approval'; readonly pending: readonly ParkedCall[] }
  /** The turn ended; always the last event of a turn that did not suspend. */
  | { readonly type: 'done'; readonly outcome: Outcome };

/** The events a model call produces while it streams. */
export type ModelStreamEvent = Extract<TurnStreamEvent, { type: 'text_delta' | 'reasoning_delta' | 'tool_call' }>;
