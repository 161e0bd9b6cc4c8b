// A violation `checkAgent` reports and the steps of its path (their own file: the counterexample
// writer reads them, and checkAgent, which calls the writer, returns them).

import type { TurnEvent } from '@turnkit/core';
import type { AgentTrace } from './agent-properties.js';
import type { HookAnswer, PolicyAnswer } from './agent-rules.js';

/** One step of a path: a core event, and what the dispatcher did when the event reports tools. */
export interface AgentStep {
  /** The step in words, as the counterexample's comment shows it. */
  readonly label: string;
  /** The event fed to `step`. */
  readonly event: TurnEvent;
  /** Per call that ran: `ok` or `failed`. */
  readonly outcomes?: { readonly [callId: string]: 'ok' | 'failed' };
  /** Per call decided by a hook or policy answer the exploration assumed: which answers. */
  readonly assumed?: { readonly [callId: string]: { readonly hook: HookAnswer; readonly policy: PolicyAnswer } };
}

/** A property broken on some path of the exploration, with the shortest such path. */
export interface AgentViolation {
  /** The property's name, or `invariant N` of the turn contract. */
  readonly property: string;
  /** Why the path breaks the property. */
  readonly message: string;
  /** The steps from the start, the offending one last (a shortest such path). */
  readonly path: readonly AgentStep[];
  /** The call records of the path. */
  readonly trace: AgentTrace;
}
