// docs/deploying.md shows what `turnkit worker` writes on stderr: those lines are describeWorkerEvent's,
// for this sequence of events, and the CLI prefixes each with `turnkit worker: `.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { describeWorkerEvent, type WorkerEvent, type WorkerStats } from '@turnkit/store';

const zero: WorkerStats = { held: 0, claimed: 0, finished: 0, parked: 0, retrying: 0, lost: 0, handedBack: 0, claims: 0 };
const SEQUENCE: readonly [WorkerEvent, Partial<WorkerStats>][] = [
  [{ type: 'started', worker: 'w1' }, {}],
  [
    { type: 'claimed', turnId: 'turn_1', agent: 'support', token: 1 },
    { held: 1, claimed: 1, claims: 1 },
  ],
  [
    { type: 'left', turnId: 'turn_1', how: 'parked' },
    { claimed: 1, parked: 1, claims: 1 },
  ],
  [
    { type: 'database', state: 'lost', error: 'connection refused' },
    { claimed: 1, parked: 1, claims: 2 },
  ],
  [
    { type: 'database', state: 'restored' },
    { claimed: 1, parked: 1, claims: 2 },
  ],
  [
    { type: 'claimed', turnId: 'turn_1', agent: 'support', token: 2 },
    { held: 1, claimed: 2, parked: 1, claims: 3 },
  ],
  [
    { type: 'left', turnId: 'turn_1', how: 'finished' },
    { claimed: 2, finished: 1, parked: 1, claims: 3 },
  ],
  [
    { type: 'draining', held: 0, deadlineMs: 10_000 },
    { claimed: 2, finished: 1, parked: 1, claims: 3 },
  ],
  [{ type: 'stopped' }, { claimed: 2, finished: 1, parked: 1, claims: 3 }],
];

describe('docs/deploying.md', () => {
  it("shows turnkit worker's stderr lines as describeWorkerEvent writes them", () => {
    const lines = SEQUENCE.map(([event, stats]) => `turnkit worker: ${describeWorkerEvent(event, { ...zero, ...stats })}`);
    const doc = readFileSync(new URL('../../../docs/deploying.md', import.meta.url), 'utf8');
    const shown = doc.match(/```text\n(turnkit worker: [\s\S]*?)```/)?.[1];
    expect(shown).toBe(`${lines.join('\n')}\n`);
  });
});
