// One line per message: the form scenario expectations are written in, and what a failing
// conformance test prints. Tool outputs of errors are shown in full so a pattern can match them;
// line breaks inside a message are shown as ' | ' so every message stays one line.

import type { Effect, Message } from '@turnkit/core';

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

/** Watches a multi-agent turn's effects (`onEffect`) and keeps its messages as a timeline of the tree. */
export interface AgentTimeline {
  /** Give it every effect of the turn (an interpreter's effect hook, or `onEffect` of runTurn's observer): it follows the tree by them. */
  readonly onEffect: (effect: Effect) => void;
  /** One line per message in the order they were appended, each under the path of its agent. */
  lines(): string[];
}

/**
 * A timeline of a tree of agents: every message of the turn and of its child turns, in the order
 * they happened, as `messageLine`s indented by depth and led by the agent path
 * (`supervisor > researcher`). `root` is the turn's agent; a handoff changes it from the next
 * model call on (core names the active agent on its effects).
 *
 * @example
 * const timeline = agentTimeline('supervisor');
 * await runTurn({ name: 'supervisor', model, delegates: [researcher], input, onEffect: timeline.onEffect });
 * console.log(timeline.lines().join('\n'));
 */
export function agentTimeline(root: string): AgentTimeline {
  const lines: string[] = [];
  const active = new Map<string, string>([['', root]]);
  const visit = (effect: Effect, path: readonly string[], key: string): void => {
    if (effect.type === 'child') {
      const childKey = `${key}/${effect.callId}`;
      if (!active.has(childKey)) active.set(childKey, effect.agent);
      visit(effect.effect, [...path, active.get(childKey) as string], childKey);
      return;
    }
    if ((effect.type === 'call_llm' || effect.type === 'dispatch_tools') && effect.agent !== undefined) {
      active.set(key, effect.agent);
      return;
    }
    if (effect.type !== 'append') return;
    const shown = [...path.slice(0, -1), active.get(key) as string];
    lines.push(`${'  '.repeat(shown.length - 1)}${shown.join(' > ')}: ${messageLine(effect.message)}`);
  };
  return {
    onEffect: (effect) => visit(effect, [root], ''),
    lines: () => [...lines],
  };
}
