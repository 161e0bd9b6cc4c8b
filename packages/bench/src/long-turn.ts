// `step` over one very long turn: 50,000 tool rounds (a reply with one call, its result, the
// compaction) timed per 1,000 rounds, so a cost that grows with the turn's length shows as a
// rising line instead of hiding in an average over short turns.
import { createTurn, step, type TurnEvent, type TurnState } from '@turnkit/core';
import type { LongTurnFigure } from './report-types.js';
import { median } from './stats.js';

const TRANSITIONS_PER_ROUND = 3;

/**
 * The events of `rounds` tool rounds, built once before any timing. A result answers the id core
 * gave its call (core keeps the model's id unless it takes it for a repeat: call identity), so the
 * turn is stepped once here to learn those ids; step is pure, so every timed pass gives the same.
 */
function plannedEvents(rounds: number): TurnEvent[] {
  const events: TurnEvent[] = [];
  let state: TurnState = step(createTurn({ id: 'long', limits: { maxIterations: rounds + 1 } }), {
    type: 'start',
    input: 'go',
  })[0];
  for (let round = 0; round < rounds; round++) {
    const replied: TurnEvent = {
      type: 'model_responded',
      // A different input every round: identical batches in a row would be a loop.
      response: {
        text: '',
        toolCalls: [{ id: `call_${round}`, name: 'add', input: { a: round, b: 1 } }],
        usage: { inputTokens: 10, outputTokens: 5 },
      },
    };
    state = step(state, replied)[0];
    const id = state.batch?.calls[0]?.id ?? `call_${round}`;
    const completed: TurnEvent = {
      type: 'tools_completed',
      results: [{ callId: id, name: 'add', output: round + 1, isError: false }],
    };
    const compacted: TurnEvent = { type: 'compacted' };
    state = step(step(state, completed)[0], compacted)[0];
    events.push(replied, completed, compacted);
  }
  return events;
}

/**
 * Drives one turn through `rounds` tool rounds (events built before timing, per block), `passes`
 * times, and reports the median nanoseconds per transition of each block of `block` rounds.
 * Throws when the turn leaves the tool loop, since the figure would then measure something else.
 */
export function measureLongTurn(rounds: number, block = 1_000, passes = 3): LongTurnFigure {
  const blocks = Math.ceil(rounds / block);
  const samples: number[][] = Array.from({ length: blocks }, () => []);
  const planned = plannedEvents(rounds);
  for (let pass = 0; pass < passes; pass++) {
    const limits = { maxIterations: rounds + 1 };
    let state: TurnState = step(createTurn({ id: 'long', limits }), { type: 'start', input: 'go' })[0];
    for (let index = 0; index < blocks; index++) {
      const events = planned.slice(
        index * block * TRANSITIONS_PER_ROUND,
        Math.min(rounds, (index + 1) * block) * TRANSITIONS_PER_ROUND,
      );
      const started = process.hrtime.bigint();
      for (const event of events) state = step(state, event)[0];
      samples[index]?.push(Number(process.hrtime.bigint() - started) / events.length);
      if (state.status !== 'calling_model') {
        throw new Error(
          `The long turn left the tool loop in block ${index + 1} (status '${state.status}'); the per-block figure would measure something else.`,
        );
      }
    }
  }
  return { rounds, block, transitionsPerRound: TRANSITIONS_PER_ROUND, nsPerTransition: samples.map(median) };
}
