import fc from 'fast-check';
import { arbitraryEventScenario, checkInvariants, exploreTurn, runEventScenario } from '@turnkit/check';
import type { TurnLimitsInput } from '@turnkit/core';

/** Model-checks a turn with your limits: exhaustively, then with 500 random turns of up to 60 events. */
export function checkMyLimits(limits: TurnLimitsInput): { states: number; transitions: number } {
  // 1. Every reachable state and every edge (keep the limits small: the space grows fast).
  const result = exploreTurn({ limits, maxDepth: 80 });
  if (!result.exhaustive) throw new Error(`Exploration stopped at depth ${result.depth}; raise maxDepth.`);
  if (result.violations.length > 0) {
    const v = result.violations[0]!;
    throw new Error(`Invariant ${v.invariant} broken after [${v.path.join(', ')}]: ${v.message}`);
  }

  // 2. Random turns with exactly these limits, malformed events and random JSON included.
  fc.assert(
    fc.property(arbitraryEventScenario({ limits: fc.constant(limits) }), (scenario) => {
      const violations = checkInvariants(runEventScenario(scenario).trace);
      return violations.length === 0;
    }),
    { numRuns: 500 },
  );
  return { states: result.states, transitions: result.transitions };
}
