// The test interpreter: drives a turn one transition at a time, so a test can look at the state
// and effects between any two events. It performs nothing on its own except through `respond`
// or the given model and dispatcher, and it never decides anything core should decide.

import {
  buildModelRequest,
  createTurn,
  dispatchOutcomeEvent,
  isBlocking,
  isTerminal,
  step,
  toTurnError,
  type CallRecord,
  type Effect,
  type Message,
  type Model,
  type Trace,
  type TurnEvent,
  type TurnLimitsInput,
  type TurnState,
} from '@turnkit/core';
import type { BlockingEffect } from '@turnkit/core/internal';
import type { Dispatcher } from '@turnkit/dispatch';
import { recordTrace } from './trace.js';

export interface TestTurnOptions {
  readonly id?: string;
  readonly input?: string;
  readonly limits?: TurnLimitsInput;
  /** Earlier messages (a system message included) that model requests start with. */
  readonly transcript?: readonly Message[];
  /** Answers `call_llm` in `runUntil` (a `scriptedModel`, say). */
  readonly model?: Model;
  /** Answers `dispatch_tools` and `execute_approved` in `runUntil`. */
  readonly dispatcher?: Pick<Dispatcher, 'toolSpecs' | 'dispatch' | 'executeApproved'>;
  /**
   * Answers a blocking effect in `runUntil`; return `undefined` to fall back to the model and
   * dispatcher. `compact` and `check_output` fall back to `compacted` and accepting the text.
   */
  readonly respond?: (effect: BlockingEffect, turn: TestTurn) => TurnEvent | undefined | Promise<TurnEvent | undefined>;
}

/** A turn driven one event at a time by a test (`testTurn`): read its state, effects and transcript after each `send`. */
export interface TestTurn {
  /** The turn's state after the last transition. */
  readonly state: TurnState;
  /** The effects of the last transition. */
  readonly effects: readonly Effect[];
  /** Messages so far: the given transcript and every `append`. */
  readonly transcript: readonly Message[];
  /** The blocking effect waiting for an event (`done` included), or null when parked. */
  readonly blocking: BlockingEffect | null;
  /** Feeds one event through `step` and performs its non-blocking effects. */
  send(event: TurnEvent): TestTurn;
  /**
   * Cancels the tool batch in flight, not the turn (`send({ type: 'cancel_batch', reason })`): its
   * open calls get `cancelled: …` results and the turn goes on to the next model call. Use it
   * while the blocking effect is `dispatch_tools` or `execute_approved`, or while parked.
   */
  cancelBatch(reason?: string): TestTurn;
  /**
   * Answers blocking effects (with `respond`, the model or the dispatcher) until `predicate` holds,
   * the turn ends, or it parks. Without a predicate it runs to the end. A retry's `delayMs` is not
   * waited (a test stays fast); the wait is on the `call_llm` effect for a test to read.
   */
  runUntil(predicate?: (turn: TestTurn) => boolean): Promise<TestTurn>;
  /** Every transition so far, as a `Trace` (`replay` reads it). */
  trace(): Trace;
}

/**
 * Starts a turn (feeds `start`) for a step-by-step test.
 *
 * @example
 * const t = testTurn({ input: 'hi', model: scriptedModel([text('hello')]) });
 * expect(t.blocking?.type).toBe('call_llm');
 * await t.runUntil((turn) => turn.state.status === 'finalizing');
 * t.send({ type: 'output_accepted', output: 'hello' });
 */
export function testTurn(options: TestTurnOptions = {}): TestTurn {
  const initial = createTurn(
    options.limits === undefined ? { id: options.id ?? 'test-turn' } : { id: options.id ?? 'test-turn', limits: options.limits },
  );
  const recorder = recordTrace(initial);
  const transcript: Message[] = [...(options.transcript ?? [])];
  let state = initial;
  let effects: readonly Effect[] = [];

  const turn: TestTurn = {
    get state() {
      return state;
    },
    get effects() {
      return effects;
    },
    get transcript() {
      return transcript;
    },
    get blocking() {
      const last = effects.at(-1);
      return last !== undefined && isBlocking(last) ? last : null;
    },
    send(event) {
      [state, effects] = step(state, event);
      recorder.onStep({ event, state, effects });
      for (const effect of effects) if (effect.type === 'append') transcript.push(effect.message);
      return turn;
    },
    cancelBatch(reason) {
      return turn.send(reason === undefined ? { type: 'cancel_batch' } : { type: 'cancel_batch', reason });
    },
    async runUntil(predicate = () => false) {
      while (!predicate(turn)) {
        const effect = turn.blocking;
        if (effect === null || effect.type === 'done' || isTerminal(state)) break;
        turn.send(await answer(effect));
      }
      return turn;
    },
    trace: () => recorder.trace(),
  };

  async function answer(effect: Exclude<BlockingEffect, { type: 'done' }>): Promise<TurnEvent> {
    const given = await options.respond?.(effect, turn);
    if (given !== undefined) return given;
    const missing = (what: string): never => {
      throw new Error(
        `testTurn: nothing answers '${effect.type}'. Pass ${what} or a respond option that returns an event for it.`,
      );
    };
    switch (effect.type) {
      case 'call_llm': {
        const model = options.model ?? missing('a model');
        const request = buildModelRequest(effect.request, transcript.slice(), options.dispatcher?.toolSpecs() ?? []);
        try {
          return { type: 'model_responded', response: await model.generate(request, { signal: new AbortController().signal }) };
        } catch (error) {
          return { type: 'model_failed', error: toTurnError(error) };
        }
      }
      // The batch's audit records ride on the event, as in @turnkit/inline (core emits hook_blocked from them).
      case 'dispatch_tools': {
        const dispatcher = options.dispatcher ?? missing('a dispatcher');
        const records: CallRecord[] = [];
        const ctx = { turnId: state.id, transcript, onRecord: (r: CallRecord) => records.push(r) };
        return dispatchOutcomeEvent(await dispatcher.dispatch(effect.calls, ctx), records);
      }
      case 'execute_approved': {
        const dispatcher = options.dispatcher ?? missing('a dispatcher');
        const records: CallRecord[] = [];
        const ctx = { turnId: state.id, transcript, onRecord: (r: CallRecord) => records.push(r) };
        const results = await dispatcher.executeApproved(effect.calls, ctx);
        return { type: 'approved_tools_completed', results, ...(records.length === 0 ? {} : { records }) };
      }
      case 'compact':
        return { type: 'compacted' };
      case 'check_output':
        return { type: 'output_accepted', output: effect.candidate };
      // testTurn drives one agent: a child turn's effects are answered by `respond` (runTurn runs whole trees).
      case 'child':
        return missing("a respond option that answers a child turn's effects (testTurn runs one agent's turn)");
    }
  }

  return turn.send(options.input === undefined ? { type: 'start' } : { type: 'start', input: options.input });
}
