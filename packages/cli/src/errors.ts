// Errors the CLI reports as one line on stderr. A UsageError (bad flag value, missing or invalid
// file, missing API key) exits 2, like commander's own parse errors, so scripts can tell "you
// called it wrong" (2) from "the turn failed" (1).

import { errorMessage } from '@turnkit/core/internal';
import { InvalidArgumentError } from 'commander';

/** A mistake in how turnkit was called or in a file it was given; printed as one line, exit 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** Core's readable message for any thrown value (errorMessage), on one line. */
export function oneLine(error: unknown): string {
  return errorMessage(error)
    .replace(/\s*\n\s*/g, ' ')
    .trim();
}

/** A flag's parser: a whole number from `min` to `max`; anything else is refused with `expected`. */
export function wholeNumber(min: number, max = Number.MAX_SAFE_INTEGER, expected = `Expected a whole number ≥ ${min}.`) {
  return (value: string): number => {
    const n = Number(value);
    if (!/^\d+$/.test(value.trim()) || n < min || n > max) throw new InvalidArgumentError(expected);
    return n;
  };
}
