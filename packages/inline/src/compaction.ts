// Compaction: shrinking the transcript between rounds. The driver calls the user's `compact`;
// `keepLastMessages` is the one helper shipped.

import { errorMessage, type CompactInfo, type Message } from '@turnkit/core';
import type { CompactFn } from './types.js';

/** Thrown when the user's `compact` function fails; the driver turns it into a failed turn. */
export class CompactFailedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CompactFailedError';
  }
}

/**
 * A `compact` function that keeps every system message and the last `n` other messages, moving
 * the cut earlier when it would separate an assistant message from its tool results.
 *
 * @example
 * await runTurn({ model, tools, input, compact: keepLastMessages(20) });
 */
export function keepLastMessages(n: number): CompactFn {
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`keepLastMessages needs a whole number of messages >= 1, got ${String(n)}.`);
  return (transcript) => {
    const others = transcript.filter((m) => m.role !== 'system');
    if (others.length <= n) return transcript.slice();
    let cut = others.length - n;
    // A tool result must follow the assistant message that asked for it.
    while (cut > 0 && others[cut]?.role === 'tool') cut -= 1;
    const keep = new Set(others.slice(cut));
    return transcript.filter((m) => m.role === 'system' || keep.has(m));
  };
}

/** Runs `compact` and replaces `transcript`'s contents with its answer. Returns info for the `compacted` event. */
export async function runCompaction(compact: CompactFn, transcript: Message[], info: CompactInfo): Promise<{ before: number; after: number }> {
  let next: unknown;
  try {
    next = await compact(transcript.slice(), info);
  } catch (error) {
    const why = errorMessage(error);
    throw new CompactFailedError(`The compact function threw: ${why}. Fix the function passed as \`compact\`; the transcript was left as it was.`);
  }
  if (!Array.isArray(next) || next.some((m) => m === null || typeof m !== 'object' || typeof (m as { role?: unknown }).role !== 'string')) {
    throw new CompactFailedError('The compact function must return an array of messages; it returned something else. The transcript was left as it was.');
  }
  const before = transcript.length;
  transcript.splice(0, transcript.length, ...(next as Message[]));
  return { before, after: transcript.length };
}
