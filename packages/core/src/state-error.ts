// The error a persisted state that cannot be read gives, and the small readers the state's parser
// and its migrations share.

/**
 * Thrown by `parseTurnState` (and `resume`) when a persisted state is not a turn state this version can read; `field`
 * names the first bad field.
 */
export class TurnStateError extends Error {
  /** The path of the first bad field, such as `usage.modelCalls`. */
  readonly field: string;
  constructor(field: string, message: string) {
    super(message);
    this.name = 'TurnStateError';
    this.field = field;
  }
}

export type Obj = Record<string, unknown>;

export const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Throws the TurnStateError for `field`. */
export function bad(field: string, message: string): never {
  throw new TurnStateError(field, `Invalid turn state: '${field}' ${message}.`);
}
