// One new PGlite store, opened and closed in a fresh process, as a user's first
// `turnkit run --store DIR` opens it: prints the process's CPU time (ms) as JSON on stdout.
import { openStore } from '@turnkit/store';

const dir = process.argv[2];
if (dir === undefined) throw new Error('usage: new-store-child.js DIR');
const store = await openStore(dir);
await store.close();
const { user, system } = process.cpuUsage();
process.stdout.write(`${JSON.stringify({ cpuMs: (user + system) / 1000 })}\n`);
