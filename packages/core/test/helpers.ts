// Builders shared by the example tests: events to feed `step`, and the exact effects to expect.
// Expected effects are written out as data so each test compares the whole effect list.
import { createTurn, step } from '@turnkit/core';
import type { Effect, JsonValue, Outcome, ParkedCall, ToolCall, ToolResult, TurnLimitsInput, TurnState } from '@turnkit/core';
import type { TurnUsage } from '../src/types.ts';

export type Step = [TurnState, Effect[]];

// The synthesised result texts of core (decision 13 of core-decisions.md).
export const TEXT = {
  cancelled: 'cancelled: the turn was cancelled before this call finished.',
  skipped: 'skipped: repeated. This exact batch of tool calls was already made; answer with what you have.',
  skippedRecovered: 'skipped: repeated. This exact batch of tool calls was already made; it was not run again.',
  nudge: (repeats: number) =>
    `You are repeating yourself: you asked for this exact batch of tool calls ${repeats} times in a row, so it was not run again. Use the results you already have, try a different approach, or answer.`,
  batchCancelled: (reason?: string) =>
    `cancelled: the tool batch was cancelled${reason === undefined ? '' : ` (${reason})`} before this call finished; the turn goes on without its result.`,
  interrupted: 'interrupted: the turn restarted before this call reported a result; it was not run again.',
  unexpected: 'not executed: the turn failed on an unexpected event.',
  incomplete: 'not executed: the tool batch was incomplete and the turn failed.',
  internal: 'not executed: the turn failed on an internal error.',
  budget: (what: string) => `not executed: the turn's ${what} budget is used up.`,
  rejected: (reason?: string) =>
    `rejected${reason === undefined ? '' : `: ${reason}`}. A person declined this call; do not retry it unchanged.`,
} as const;

// ---------------------------------------------------------------------------------------------
// Data

export const call = (id: string, name = 'search', input: JsonValue = { q: id }): ToolCall => ({ id, name, input });

export const ok = (c: ToolCall, output: JsonValue = `out-${c.id}`): ToolResult => ({
  callId: c.id,
  name: c.name,
  output,
  isError: false,
});

/** The kind core gives a synthesised result, read off its text (each text says why the call did not run). */
export function synthKind(output: string): string {
  if (output.startsWith('cancelled:')) return 'cancelled';
  if (output.startsWith('interrupted:')) return 'interrupted';
  if (output.startsWith('rejected')) return 'denied';
  if (output.includes('budget is used up')) return 'budget';
  return 'not_executed';
}

export const synth = (c: ToolCall, output: string): ToolResult => ({
  callId: c.id,
  name: c.name,
  output,
  isError: true,
  errorKind: synthKind(output),
});

export const usage = (counts: Partial<TurnUsage> = {}): TurnUsage => ({
  inputTokens: 0,
  outputTokens: 0,
  totalTokens: 0,
  cost: 0,
  modelCalls: 0,
  toolCalls: 0,
  ...counts,
});

// ---------------------------------------------------------------------------------------------
// Events

export const ev = {
  start: (input?: string) => (input === undefined ? { type: 'start' } : { type: 'start', input }),
  responded: (toolCalls: readonly ToolCall[], text = '', extra: Record<string, unknown> = {}) => ({
    type: 'model_responded',
    response: { text, toolCalls, ...extra },
  }),
  completed: (results: readonly ToolResult[]) => ({ type: 'tools_completed', results }),
  parked: (held: readonly ToolResult[], parked: readonly ParkedCall[]) => ({ type: 'tools_parked', held, parked }),
  decided: (decisions: Record<string, unknown>) => ({ type: 'approvals_decided', decisions }),
  expired: () => ({ type: 'approval_expired' }),
  approvedCompleted: (results: readonly ToolResult[]) => ({ type: 'approved_tools_completed', results }),
  compacted: () => ({ type: 'compacted' }),
  accepted: (output: JsonValue) => ({ type: 'output_accepted', output }),
  rejected: (reason: string) => ({ type: 'output_rejected', reason }),
  cancel: (reason?: string) => (reason === undefined ? { type: 'cancel' } : { type: 'cancel', reason }),
  cancelBatch: (reason?: string) => (reason === undefined ? { type: 'cancel_batch' } : { type: 'cancel_batch', reason }),
};

// ---------------------------------------------------------------------------------------------
// Effects

export const fx = {
  user: (content: string): Effect => ({ type: 'append', message: { role: 'user', content } }),
  assistant: (content: string, toolCalls: readonly ToolCall[] = []): Effect => ({
    type: 'append',
    message: { role: 'assistant', content, toolCalls },
  }),
  result: (result: ToolResult): Effect => ({ type: 'append', message: { role: 'tool', result } }),
  emit: (
    name: 'turn_started' | 'iteration' | 'steering' | 'awaiting_approval' | 'limit_reached' | 'ignored_event' | 'hook_blocked',
    data: unknown,
  ): Effect => ({
    type: 'emit',
    notice: { name, data: data as JsonValue },
  }),
  persist: (checkpoint: 'dispatching' | 'parked' | 'boundary'): Effect => ({ type: 'persist', checkpoint }),
  callModel: (iteration: number, final: boolean, modelOverride?: string): Effect =>
    modelOverride === undefined
      ? { type: 'call_llm', request: { iteration, final } }
      : { type: 'call_llm', request: { iteration, final, modelOverride } },
  dispatch: (calls: readonly ToolCall[]): Effect => ({ type: 'dispatch_tools', calls }),
  execute: (calls: readonly ToolCall[]): Effect => ({ type: 'execute_approved', calls }),
  compact: (round: number, u: TurnUsage): Effect => ({ type: 'compact', info: { round, usage: u } }),
  check: (candidate: string): Effect => ({ type: 'check_output', candidate }),
  done: (outcome: Outcome): Effect => ({ type: 'done', outcome }),
};

export const outcome = {
  stopped: (
    stopReason: 'completed' | 'max_iterations' | 'loop_detected' | 'budget_exhausted' | 'hook_stopped',
    output: JsonValue,
  ): Outcome => ({
    status: 'stopped',
    stopReason,
    output,
  }),
  failed: (kind: string, message: string, data?: JsonValue): Outcome =>
    data === undefined ? { status: 'failed', error: { kind, message } } : { status: 'failed', error: { kind, message, data } },
  cancelled: (reason: string): Outcome => ({ status: 'cancelled', reason }),
};

// ---------------------------------------------------------------------------------------------
// Driving a turn

/** Feeds the events in order and returns the last step (the turn's state and effects after it). */
export function drive(state: TurnState, ...events: unknown[]): Step {
  let result: Step = [state, []];
  for (const event of events) result = step(result[0], event);
  return result;
}

export const newTurn = (limits?: TurnLimitsInput): TurnState =>
  limits === undefined ? createTurn({ id: 't1' }) : createTurn({ id: 't1', limits });

/** A turn that issued its first model call. */
export const callingModel = (limits?: TurnLimitsInput): TurnState => drive(newTurn(limits), ev.start('hi'))[0];

/** A turn that dispatched `calls` in its first round. */
export const dispatching = (calls: readonly ToolCall[], limits?: TurnLimitsInput): TurnState =>
  drive(callingModel(limits), ev.responded(calls))[0];

/** A turn whose first round of `calls` completed (status steering, round 1). */
export const steering = (calls: readonly ToolCall[], limits?: TurnLimitsInput): TurnState =>
  drive(dispatching(calls, limits), ev.completed(calls.map((c) => ok(c))))[0];

/** A turn holding a text-only reply for check_output. */
export const finalizing = (text = 'the answer', limits?: TurnLimitsInput): TurnState =>
  drive(callingModel(limits), ev.responded([], text))[0];
