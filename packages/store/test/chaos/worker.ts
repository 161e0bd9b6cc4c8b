// A chaos worker process: runs the chaos agent on a Postgres store until SIGTERM (then drains) or
// SIGKILL. Prints its counts as one JSON line on stdout after every event, so the parent knows
// them even when it is killed.
//   node --import tsx --conditions=@turnkit/source worker.ts <url> <schema>

import { createStore, createWorker, openSql } from '../../src/index.js';
import { CHAOS_AGENT, chaosAgent } from './agent.js';

const [url, schema] = process.argv.slice(2) as [string, string];
const sql = await openSql(url, { schema });
const store = createStore(sql);
const agent = chaosAgent(sql, () => 100 + Math.floor(Math.random() * 200));
const worker = createWorker({
  store,
  agents: { [CHAOS_AGENT]: agent },
  concurrency: 8,
  leaseMs: 1500,
  pollMs: 1000,
  onError: () => undefined,
  observer: (_event, stats) => void process.stdout.write(`${JSON.stringify(stats)}\n`),
});
worker.start();
process.once('SIGTERM', () => {
  void worker
    .stop({ deadlineMs: 2000 })
    .then(() => store.close())
    .then(() => process.exit(0));
});
