// Compaction: shrinking the transcript between rounds. The driver calls the user's `compact`;
// `keepLastMessages` is the one helper shipped.

import { errorMessage, type CompactInfo } from '@turnkit/core/internal';
import type { Message } from '@turnkit/core';
import type { CompactFn } from './types.js';

/** Thrown when the user's `compact` function fails; the driver turns it into a failed turn. */
export class CompactFailedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CompactFailedError';
  }
}

/**
 * A `compact` function that keeps every system message, the first user message (the task) and the
 * last `n` other messages, moving the cut earlier when it would separate an assistant message
 * from its tool results.
 *
 * @example
 * await runTurn({ model, tools, input, compact: keepLastMessages(20) });
 */
export function keepLastMessages(n: number): CompactFn {
  if (!Number.isInteger(n) || n < 1)
    throw new RangeError(`keepLastMessages needs a whole number of messages >= 1, got ${String(n)}.`);
  return (transcript) => {
    const firstUser = transcript.findIndex((m) => m.role === 'user');
    // The positions that may be dropped: everything but system messages and the first user message.
    const others: number[] = [];
    transcript.forEach((m, i) => {
      if (m.role !== 'system' && i !== firstUser) others.push(i);
    });
    if (others.length <= n) return transcript.slice();
    let cut = others.length - n;
    // A tool result must follow the assistant message that asked for it.
    while (cut > 0 && transcript[others[cut] as number]?.role === 'tool') cut -= 1;
    const keep = new Set(others.slice(cut));
    return transcript.filter((m, i) => m.role === 'system' || i === firstUser || keep.has(i));
  };
}

/**
 * What a transcript leaves unpaired: tool results with no assistant call before them
 * (`orphanedResults`) and assistant calls with no result after them (`unansweredCalls`), by call
 * id, in transcript order. Providers refuse both.
 */
export function unpairedCalls(transcript: readonly Message[]): { orphanedResults: string[]; unansweredCalls: string[] } {
  const open = new Set<string>();
  const orphanedResults: string[] = [];
  const unansweredCalls: string[] = [];
  const close = (): void => {
    unansweredCalls.push(...open);
    open.clear();
  };
  for (const m of transcript) {
    if (m.role === 'tool') {
      if (open.has(m.result.callId)) open.delete(m.result.callId);
      else orphanedResults.push(m.result.callId);
    } else if (m.role === 'assistant') {
      close();
      for (const call of m.toolCalls) open.add(call.id);
    }
  }
  close();
  return { orphanedResults, unansweredCalls };
}

/** The ids of `after` not in `before` (pairings the compaction broke, not ones it was handed). */
function newlyBroken(before: readonly string[], after: readonly string[]): string[] {
  const had = new Set(before);
  return after.filter((id) => !had.has(id));
}

/** Enough of a message's shape to pair calls with results (the messages came from user code). */
function isMessageShape(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return false;
  const m = value as { role?: unknown; toolCalls?: unknown; result?: unknown };
  if (typeof m.role !== 'string') return false;
  if (m.role === 'assistant')
    return (
      Array.isArray(m.toolCalls) &&
      m.toolCalls.every((c: unknown) => c !== null && typeof c === 'object' && typeof (c as { id?: unknown }).id === 'string')
    );
  if (m.role === 'tool')
    return m.result !== null && typeof m.result === 'object' && typeof (m.result as { callId?: unknown }).callId === 'string';
  return true;
}

const quoteIds = (ids: readonly string[]): string => ids.map((id) => JSON.stringify(id)).join(', ');

/** Runs `compact` and replaces `transcript`'s contents with its answer. Returns info for the `compacted` event. */
export async function runCompaction(
  compact: CompactFn,
  transcript: Message[],
  info: CompactInfo,
): Promise<{ before: number; after: number }> {
  let next: unknown;
  try {
    next = await compact(transcript.slice(), info);
  } catch (error) {
    const why = errorMessage(error);
    throw new CompactFailedError(
      `The compact function threw: ${why}. Fix the function passed as \`compact\`; the transcript was left as it was.`,
    );
  }
  if (!Array.isArray(next)) {
    throw new CompactFailedError(
      'The compact function must return an array of messages; it returned something else. The transcript was left as it was.',
    );
  }
  const bad = next.findIndex((m) => !isMessageShape(m));
  if (bad >= 0) {
    throw new CompactFailedError(
      `The compact function must return an array of messages; item ${bad} is not one (a message has a role, an assistant message its toolCalls, a tool message its result). The transcript was left as it was.`,
    );
  }
  // A compaction must not separate a call from its results: the next model request would carry a
  // result whose call is gone (or a call with no result), which providers refuse.
  const was = unpairedCalls(transcript);
  const now = unpairedCalls(next as Message[]);
  const orphaned = newlyBroken(was.orphanedResults, now.orphanedResults);
  const unanswered = newlyBroken(was.unansweredCalls, now.unansweredCalls);
  if (orphaned.length > 0 || unanswered.length > 0) {
    const parts = [
      orphaned.length > 0
        ? `it keeps the tool results for ${quoteIds(orphaned)} but drops the assistant message that made ${orphaned.length === 1 ? 'that call' : 'those calls'}`
        : '',
      unanswered.length > 0 ? `it keeps the calls ${quoteIds(unanswered)} but drops their tool results` : '',
    ].filter((part) => part.length > 0);
    throw new CompactFailedError(
      `The compact function broke calls apart from their results: ${parts.join('; ')}. Keep or drop an assistant message together with its tool results (keepLastMessages does); the transcript was left as it was.`,
    );
  }
  const before = transcript.length;
  transcript.splice(0, transcript.length, ...(next as Message[]));
  return { before, after: transcript.length };
}
