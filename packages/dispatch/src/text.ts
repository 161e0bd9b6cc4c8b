// Texts the dispatcher writes: safe descriptions of thrown values (core's `errorMessage`, with the
// value's type) and names.

import { kindOf } from './errors.js';
import { errorMessage } from '@turnkit/core/internal';

/**
 * A thrown value for an error text, naming its type: `TypeError: fetch failed`, and a
 * `ToolError`'s kind: `ToolError (rate_limited): busy`. A plain `Error` is `Error: …`; a subclass
 * that keeps the inherited name is named by its constructor; a thrown string or other value is just
 * its description. Never throws.
 */
export function describeThrown(error: unknown): string {
  const message = errorMessage(error);
  if (!(error instanceof Error)) return message;
  let type = 'Error';
  try {
    const name = error.name;
    const ctor = (error.constructor as { name?: unknown } | undefined)?.name;
    if (typeof name === 'string' && name !== '' && name !== 'Error') type = name;
    else if (typeof ctor === 'string' && ctor !== '') type = ctor;
  } catch {
    // An error whose name throws when read is an `Error`.
  }
  const { kind } = kindOf(error);
  const named = type.length > 80 ? `${type.slice(0, 80)}…` : type;
  return `${named}${kind === 'tool_error' ? '' : ` (${kind})`}: ${message}`;
}

/** Quotes a name for a message, cut to 80 characters so a hostile name cannot flood the text. */
export function quote(name: string): string {
  return `'${name.length > 80 ? `${name.slice(0, 80)}…` : name}'`;
}
