// `pnpm console`: a worker and the console on an in-memory store with a few demo turns (two of
// them waiting for a person). Prints the URL and the token; Ctrl-C stops it.

import { generateToken, serve } from '@turnkit/server';
import { createWorker, openStore } from '@turnkit/store';
import { demoAgents, submitDemoTurns } from './demo-agents.js';

const store = await openStore('memory://');
const worker = createWorker({ store, agents: demoAgents, pollMs: 100 });
await submitDemoTurns(store);
await worker.runUntilIdle();
worker.start();

const token = process.env.TURNKIT_SERVER_TOKEN || generateToken();
const server = await serve({ store, token, port: Number(process.env.PORT ?? 4700) });
process.stdout.write(`turnkit console: ${server.url}/console\ntoken (paste it to sign in): ${token}\nCtrl-C stops it.\n`);

const stop = async (): Promise<void> => {
  await server.close();
  await worker.stop();
  await store.close();
  process.exit(0);
};
process.once('SIGINT', () => void stop());
process.once('SIGTERM', () => void stop());
