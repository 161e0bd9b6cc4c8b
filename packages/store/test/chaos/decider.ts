// The chaos decider: a separate process that, at random moments, picks a turn waiting for
// approval and approves (mostly) or rejects its parked call. It prints `ack <turn> <call>` once
// `store.decide` has returned with the call accepted: the parent checks each of those was applied.
// It keeps going through database errors (Postgres is restarted meanwhile) until SIGTERM.
//   node --import tsx --conditions=@turnkit/source decider.ts <url> <schema>

import { openStore } from '../../src/index.js';

const [url, schema] = process.argv.slice(2) as [string, string];
const store = await openStore(url, { schema });
const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
let stopping = false;
process.once('SIGTERM', () => void (stopping = true));

while (!stopping) {
  await pause(10 + Math.floor(Math.random() * 60));
  try {
    const { turns } = await store.list({ status: 'awaiting_approval', limit: 1000 });
    const pick = turns[Math.floor(Math.random() * turns.length)];
    if (pick === undefined) continue;
    const turn = await store.get(pick.id);
    const calls = turn?.parked.map((p) => p.call.id) ?? [];
    if (calls.length === 0) continue;
    const decision = Math.random() < 0.85 ? { type: 'approve' as const } : { type: 'reject' as const, reason: 'chaos says no' };
    const { accepted } = await store.decide(pick.id, Object.fromEntries(calls.map((c) => [c, decision])));
    for (const call of accepted) process.stdout.write(`ack ${pick.id} ${call}\n`);
  } catch {
    // The turn moved on meanwhile, or the database is restarting: try again at the next moment.
  }
}
await store.close();
