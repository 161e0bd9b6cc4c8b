import { exploreStore, PROTOCOL_MUTANTS, type WorldConfig } from '@turnkit/check/internal';

// Two workers; one turn whose batch has a plain call and a call that waits for approval; one
// process death and one lease that expires under a live (paused) worker.
const world: WorldConfig = {
  workers: 2,
  deaths: 1,
  pauses: 1,
  turns: [
    {
      id: 't1',
      calls: [
        { id: 'plain', parked: false },
        { id: 'parked', parked: true },
      ],
    },
  ],
};

const real = exploreStore({ config: world });
console.log(`${real.states} worlds, ${real.transitions} transitions, depth ${real.depth}, exhaustive: ${real.exhaustive}`);
console.log(`violations: ${real.violationCount}, deadlocked worlds: ${real.deadlocked}`);

// A planted bug: writes go out without their fencing token.
const unfenced = PROTOCOL_MUTANTS.find((m) => m.name === 'skip the fence check on a write')!;
const broken = exploreStore({ config: world, protocol: unfenced.protocol, stopAt: unfenced.invariant });
const first = broken.violations[0]!;
console.log(`invariant ${first.invariant}: ${first.message}`);
console.log(first.path.join(' → '));
