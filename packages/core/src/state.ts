import type { TurnState } from './types.js';
export const TURN_STATE_VERSION = 1;
export class TurnStateError extends Error { constructor(readonly field: string, message: string) { super(message); this.name = 'TurnStateError'; } }
export function parseTurnState(_json: unknown): TurnState { throw new Error('todo'); }
