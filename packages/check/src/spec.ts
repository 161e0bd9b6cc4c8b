// The turn at the level a reader thinks in: statuses and what moves a turn between them. Counters
// (rounds, repairs, budgets) stay out; the one fact a reader needs is whether a batch was made
// before, because only then can a reply repeat it. `test/spec.test.ts` walks every shortest path
// of this machine and drives the real `step` with matching concrete events, so the two cannot
// drift apart silently; `docs/turn-machine.md` holds the diagram generated from it.

import { assign, setup } from 'xstate';

/** The reader-level events. Each stands for one kind of concrete event (see `test/spec.test.ts`). */
export type TurnSpecEvent =
  | { type: 'START' }
  | { type: 'REPLY_TEXT' }
  | { type: 'REPLY_TOOLS' }
  | { type: 'REPLY_REPEATED' }
  | { type: 'REPLY_OVER_BUDGET' }
  | { type: 'REPLY_BAD_ID' }
  | { type: 'REPLY_FINAL' }
  | { type: 'MODEL_FAILED' }
  | { type: 'TOOLS_DONE' }
  | { type: 'TOOLS_STOP' }
  | { type: 'TOOLS_PARKED' }
  | { type: 'TOOLS_INCOMPLETE' }
  | { type: 'TOOLS_DELEGATE' }
  | { type: 'CHILD_DONE' }
  | { type: 'APPROVE' }
  | { type: 'REJECT' }
  | { type: 'EXPIRE' }
  | { type: 'APPROVED_DONE' }
  | { type: 'COMPACTED' }
  | { type: 'COMPACTED_AT_LIMIT' }
  | { type: 'COMPACTED_OVER_BUDGET' }
  | { type: 'ACCEPT' }
  | { type: 'REPAIR' }
  | { type: 'REJECT_NO_REPAIRS' }
  | { type: 'CANCEL' }
  | { type: 'MALFORMED' };

/** The turn's statuses and transitions as an xstate machine (substates: tools allowed or not; a normal or forced final text). */
export const turnSpec = setup({
  types: {
    context: {} as { batchMade: boolean },
    events: {} as TurnSpecEvent,
  },
  guards: {
    afterABatch: ({ context }) => context.batchMade,
  },
  actions: {
    rememberBatch: assign({ batchMade: true }),
  },
}).createMachine({
  id: 'turn',
  initial: 'ready',
  context: { batchMade: false },
  // From any status that is not terminal (terminal states are final: they absorb everything).
  on: {
    CANCEL: { target: '.cancelled', description: 'synthesised results for open calls' },
    MALFORMED: { target: '.failed', description: 'unexpected_event or invalid_model_response' },
  },
  states: {
    ready: {
      on: { START: 'calling_model' },
    },
    calling_model: {
      initial: 'tools_allowed',
      states: {
        tools_allowed: {
          on: {
            REPLY_TEXT: '#turn.finalizing.normal',
            REPLY_TOOLS: { target: '#turn.dispatching', actions: 'rememberBatch' },
            REPLY_REPEATED: {
              guard: 'afterABatch',
              target: 'final_only',
              description: 'loop: skipped results, forced final call',
            },
            REPLY_OVER_BUDGET: '#turn.stopped',
            REPLY_BAD_ID: '#turn.failed',
            MODEL_FAILED: '#turn.failed',
          },
        },
        final_only: {
          on: {
            REPLY_FINAL: { target: '#turn.finalizing.forced', description: 'tool calls dropped' },
            MODEL_FAILED: '#turn.failed',
          },
        },
      },
    },
    dispatching: {
      on: {
        TOOLS_DONE: 'steering',
        TOOLS_STOP: { target: 'stopped', description: 'hook_stopped' },
        TOOLS_PARKED: 'awaiting_approval',
        TOOLS_INCOMPLETE: { target: 'failed', description: 'incomplete_batch' },
        TOOLS_DELEGATE: { target: 'delegating', description: 'transfer_task: a child turn runs' },
      },
    },
    awaiting_approval: {
      on: {
        APPROVE: 'executing_approved',
        REJECT: 'steering',
        EXPIRE: 'steering',
      },
    },
    executing_approved: {
      on: { APPROVED_DONE: 'steering', TOOLS_DELEGATE: 'delegating' },
    },
    delegating: {
      on: { CHILD_DONE: { target: 'steering', description: "the child's end is the call's result" } },
    },
    steering: {
      on: {
        COMPACTED: 'calling_model.tools_allowed',
        COMPACTED_AT_LIMIT: { target: 'calling_model.final_only', description: 'max_iterations' },
        COMPACTED_OVER_BUDGET: { target: 'stopped', description: 'budget_exhausted' },
      },
    },
    finalizing: {
      initial: 'normal',
      states: {
        normal: {
          on: { REPAIR: '#turn.calling_model.tools_allowed' },
        },
        forced: {
          on: { REPAIR: '#turn.calling_model.final_only' },
        },
      },
      on: {
        ACCEPT: 'stopped',
        REJECT_NO_REPAIRS: { target: 'failed', description: 'output_invalid' },
      },
    },
    stopped: { type: 'final' },
    failed: { type: 'final' },
    cancelled: { type: 'final' },
  },
});
