// One line per message: the form scenario expectations are written in, and what a failing
// conformance test prints. Tool outputs of errors are shown in full so a pattern can match them;
// line breaks inside a message are shown as ' | ' so every message stays one line.

import type { Message } from '@turnkit/core';

/**
 * `system: …`, `user: …`, `assistant: text [call_1 add, call_2 mul]`, `tool call_1 add: ok 3`,
 * `tool call_2 mul: error Unknown tool …`.
 */
export function messageLine(message: Message): string {
  return rawLine(message).replace(/\s*\n\s*/g, ' | ');
}

function rawLine(message: Message): string {
  switch (message.role) {
    case 'system':
    case 'user':
      return `${message.role}: ${message.content}`;
    case 'assistant': {
      const calls = message.toolCalls.map((c) => `${c.id} ${c.name}`).join(', ');
      const parts = [message.content, calls.length > 0 ? `[${calls}]` : ''].filter((p) => p.length > 0);
      return `assistant: ${parts.join(' ')}`.trimEnd();
    }
    case 'tool': {
      const { callId, name, isError, output } = message.result;
      const shown = typeof output === 'string' && isError ? output : JSON.stringify(output);
      return `tool ${callId} ${name}: ${isError ? 'error' : 'ok'} ${shown}`;
    }
  }
}

/** The transcript as lines (see `messageLine`). */
export function transcriptLines(transcript: readonly Message[]): string[] {
  return transcript.map(messageLine);
}
