// The thread corpus: conversations of several turns, each turn continuing its thread's
// transcript (after compaction), with hand-written expectations for the thread's transcript after
// every turn. Every interpreter that runs threads must give exactly these (in-process: `runTurn`
// with the last result's transcript and the thread as the grants' session; durably: stored turns
// submitted with `thread`). One scripted model answers every turn of a scenario, in order.

import type { ApprovalDecision, Message, ParkedCall } from '@turnkit/core';
import { createDispatcher, defineTool, type Dispatcher, type DispatcherOptions } from '@turnkit/dispatch';
import { z } from 'zod';
import { compareOutcome } from './run-scenario.js';
import { check, type ExpectedOutcome } from './scenarios.js';
import { call, scriptedModel, text, toolCalls, type ScriptedModel, type ScriptStep } from './scripted.js';
import type { ConformanceResult, ConformanceRunOptions } from './types.js';

/** What a thread of a scenario is run with: a turn's options without its input, plus the thread and a compaction. */
export interface ConformanceThreadOptions extends Omit<ConformanceRunOptions, 'input' | 'transcript' | 'id' | 'signal'> {
  /** The thread's id: its turns' grants belong to it (the session, in-process). */
  readonly thread: string;
  /** Shrinks the transcript between rounds (`runTurn`'s `compact`). */
  readonly compact?: (transcript: readonly Message[]) => readonly Message[];
}

/** One thread of an interpreter: each `turn` runs one user message to its end, after the earlier ones. */
export interface ConformanceThreadRun {
  /** Runs a turn; its result's `transcript` is the thread's transcript after it (system prompt first, as runTurn gives it). */
  turn(input: string): Promise<ConformanceResult>;
}

/**
 * An interpreter's threads as the thread scenarios use them: opens a thread with these options and returns its `turn`
 * runner.
 */
export type ConformanceThreads = (options: ConformanceThreadOptions) => ConformanceThreadRun | Promise<ConformanceThreadRun>;

/** A fresh run of a thread scenario (`setup()`): the options, model and what the tools and the approve callback saw. */
export interface ThreadScenarioRun {
  /** The options of every thread of the scenario (each gets its own `thread` id). */
  readonly options: Omit<ConformanceThreadOptions, 'thread'>;
  /** The scenario's scripted model (its replies for every turn of every thread). */
  readonly model: ScriptedModel;
  /** What the approve callback was asked, in order. */
  readonly approvals: (readonly ParkedCall[])[];
  /** The tools that ran, in order. */
  readonly executed: string[];
}

/**
 * A conversation scenario: turns of one or more threads, each checked against its expected outcome and transcript
 * (`runThreadScenario`).
 */
export interface ThreadScenario {
  /** The scenario's name (the test's name). */
  readonly name: string;
  /** What the scenario checks, in a sentence. */
  readonly about: string;
  /** Makes a fresh run: the model, the tools and the records of what ran. */
  setup(): ThreadScenarioRun;
  /** The turns, in the order they are run, each naming its thread. `expected.transcript` is its thread's after the turn. */
  readonly turns: readonly { readonly thread: string; readonly input: string; readonly expected: ExpectedOutcome }[];
  /** Further checks after every turn ran (what the tools and the approve callback saw). */
  verify?(run: ThreadScenarioRun): void;
}

const SYSTEM = 'You are a terse operator.';

/** Compacts only past `over` messages: keeps the system messages and everything from the last user message on (no call is parted from its result). */
function keepFromLastUser(over: number) {
  return (transcript: readonly Message[]): readonly Message[] => {
    if (transcript.length <= over) return transcript;
    const last = transcript.findLastIndex((m) => m.role === 'user');
    return transcript.filter((m, i) => m.role === 'system' || i >= last);
  };
}

function setup(
  steps: readonly ScriptStep[],
  decide: (pending: readonly ParkedCall[]) => Record<string, ApprovalDecision>,
  compact?: (transcript: readonly Message[]) => readonly Message[],
): () => ThreadScenarioRun {
  return () => {
    const executed: string[] = [];
    const approvals: (readonly ParkedCall[])[] = [];
    const made: DispatcherOptions = {
      tools: [
        defineTool({
          name: 'add',
          description: 'Adds two numbers.',
          input: z.object({ a: z.number(), b: z.number() }),
          readOnly: true,
          execute: ({ a, b }) => {
            executed.push('add');
            return a + b;
          },
        }),
        defineTool({
          name: 'deploy',
          description: 'Deploys a service.',
          input: z.object({ service: z.string() }),
          needsApproval: true,
          execute: ({ service }) => {
            executed.push(`deploy ${service}`);
            return `deployed ${service}`;
          },
        }),
      ],
    };
    const model = scriptedModel(steps);
    const tools: Dispatcher = createDispatcher(made);
    const approve = async (pending: readonly ParkedCall[]) => {
      approvals.push(pending);
      return decide(pending);
    };
    return {
      options: { model, tools, dispatcherOptions: made, system: SYSTEM, approve, ...(compact === undefined ? {} : { compact }) },
      model,
      approvals,
      executed,
    };
  };
}

/** Approves every parked call; a deploy of `remembered` is approved with `remember: 'session'`. */
const approveAll =
  (remembered: string) =>
  (pending: readonly ParkedCall[]): Record<string, ApprovalDecision> =>
    Object.fromEntries(
      pending.map((p) => [
        p.call.id,
        (p.input as { service?: unknown } | null)?.service === remembered
          ? { type: 'approve', remember: 'session' }
          : { type: 'approve' },
      ]),
    );

const done = (transcript: ExpectedOutcome['transcript']): ExpectedOutcome => ({
  status: 'stopped',
  stopReason: 'completed',
  transcript,
});

const sys = `system: ${SYSTEM}`;

/**
 * The thread scenarios every interpreter with threads passes: grants remembered across turns, compaction, several
 * threads side by side.
 */
export const threadScenarios: readonly ThreadScenario[] = [
  {
    name: 'thread: three turns, an approval remembered, a compaction',
    about:
      'Each turn continues the last: the second parks a deploy that is approved with remember session, the third deploys without asking and is compacted, and its model request carries the compacted transcript only.',
    setup: setup(
      [
        toolCalls(call('add', { a: 1, b: 2 })),
        text('3.'),
        toolCalls(call('deploy', { service: 'api' })),
        text('Deployed api.'),
        toolCalls(call('deploy', { service: 'db' })),
        text('Deployed db.'),
      ],
      approveAll('api'),
      keepFromLastUser(9),
    ),
    turns: [
      {
        thread: 'one',
        input: 'What is 1 + 2?',
        expected: done([sys, 'user: What is 1 + 2?', 'assistant: [call_1 add]', 'tool call_1 add: ok 3', 'assistant: 3.']),
      },
      {
        thread: 'one',
        input: 'Deploy api.',
        expected: done([
          sys,
          'user: What is 1 + 2?',
          'assistant: [call_1 add]',
          'tool call_1 add: ok 3',
          'assistant: 3.',
          'user: Deploy api.',
          'assistant: [call_2 deploy]',
          'tool call_2 deploy: ok "deployed api"',
          'assistant: Deployed api.',
        ]),
      },
      {
        thread: 'one',
        input: 'Deploy db too.',
        // Past nine messages the compaction keeps the system prompt and the last user message on.
        expected: done([
          sys,
          'user: Deploy db too.',
          'assistant: [call_3 deploy]',
          'tool call_3 deploy: ok "deployed db"',
          'assistant: Deployed db.',
        ]),
      },
    ],
    verify(run) {
      check(run.approvals.length === 1, `approve must be asked once (turn 2), was asked ${run.approvals.length} times`);
      check(run.executed.join(',') === 'add,deploy api,deploy db', `the tools must run once each, ran ${run.executed.join(',')}`);
      const requests = run.model.calls;
      check(requests.length === 6, `the model must be called 6 times, was called ${requests.length} times`);
      // The second turn's first request carries the first turn's conversation.
      check(
        requests[2]?.messages.length === 6,
        `turn 2's first request must carry 6 messages, had ${requests[2]?.messages.length}`,
      );
      // The third turn's last request carries the compacted transcript, not the thread's 12 messages.
      check(
        requests[5]?.messages.length === 4,
        `turn 3's last request must carry 4 messages, had ${requests[5]?.messages.length}`,
      );
    },
  },
  {
    name: 'thread: grants stay in their thread',
    about:
      "A deploy approved with remember session in one thread runs unasked in that thread's next turn, and is asked again in another thread.",
    setup: setup(
      [
        toolCalls(call('deploy', { service: 'api' })),
        text('Deployed api.'),
        toolCalls(call('deploy', { service: 'db' })),
        text('Deployed db.'),
        toolCalls(call('deploy', { service: 'web' })),
        text('Deployed web.'),
      ],
      approveAll('api'),
    ),
    turns: [
      {
        thread: 'a',
        input: 'Deploy api.',
        expected: done([
          sys,
          'user: Deploy api.',
          'assistant: [call_1 deploy]',
          'tool call_1 deploy: ok "deployed api"',
          'assistant: Deployed api.',
        ]),
      },
      {
        thread: 'b',
        input: 'Deploy db.',
        expected: done([
          sys,
          'user: Deploy db.',
          'assistant: [call_2 deploy]',
          'tool call_2 deploy: ok "deployed db"',
          'assistant: Deployed db.',
        ]),
      },
      {
        thread: 'a',
        input: 'Deploy web.',
        expected: done([
          sys,
          'user: Deploy api.',
          'assistant: [call_1 deploy]',
          'tool call_1 deploy: ok "deployed api"',
          'assistant: Deployed api.',
          'user: Deploy web.',
          'assistant: [call_3 deploy]',
          'tool call_3 deploy: ok "deployed web"',
          'assistant: Deployed web.',
        ]),
      },
    ],
    verify(run) {
      const asked = run.approvals.map((p) => p.map((x) => x.call.id).join(',')).join(' ');
      check(
        asked === 'call_1 call_2',
        `approve must be asked about call_1 (thread a) and call_2 (thread b) only, was asked about ${asked}`,
      );
    },
  },
];

/** Runs one thread scenario through `threads` (a thread per id, made when first used); throws an Error listing every difference. */
export async function runThreadScenario(scenario: ThreadScenario, threads: ConformanceThreads, prefix = ''): Promise<void> {
  const run = scenario.setup();
  const open = new Map<string, ConformanceThreadRun>();
  const problems: string[] = [];
  for (const [i, turn] of scenario.turns.entries()) {
    let thread = open.get(turn.thread);
    if (thread === undefined) {
      thread = await threads({ ...run.options, thread: `${prefix}${turn.thread}` });
      open.set(turn.thread, thread);
    }
    const result = await thread.turn(turn.input);
    problems.push(...compareOutcome(result, turn.expected).map((p) => `turn ${i + 1} (thread ${turn.thread}): ${p}`));
    if (problems.length > 0) break;
  }
  if (problems.length === 0) {
    try {
      scenario.verify?.(run);
    } catch (error) {
      problems.push(error instanceof Error ? error.message : String(error));
    }
  }
  if (problems.length > 0) throw new Error(`Thread scenario '${scenario.name}' (${scenario.about}):\n- ${problems.join('\n- ')}`);
}
