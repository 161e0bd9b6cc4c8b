// Errors the CLI reports as one line on stderr. A UsageError (bad flag value, missing or invalid
// file, missing API key) exits 2, like commander's own parse errors, so scripts can tell "you
// called it wrong" (2) from "the turn failed" (1).

import { errorMessage } from '@turnkit/core/internal';

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
