// Placeholder while the reducer is being written (replaced in the next commit).
import type { Effect, ToolResult, TurnEvent, TurnOptions, TurnState } from './types.js';
export function createTurn(_options: TurnOptions): TurnState { throw new Error('todo'); }
export function step(_state: TurnState, _event: TurnEvent | unknown): [TurnState, Effect[]] { throw new Error('todo'); }
export function resume(_state: TurnState, _completed?: readonly ToolResult[]): [TurnState, Effect[]] { throw new Error('todo'); }
export function isTerminal(state: TurnState): boolean { return state.status === 'stopped' || state.status === 'failed' || state.status === 'cancelled'; }
