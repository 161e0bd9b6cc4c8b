import { writeFileSync } from 'node:fs';
import { runTurn } from '@turnkit/inline';
import { scriptedModel } from '@turnkit/testing';
import { script, tools } from './agent.js';

const file = process.argv[2] ?? 'turn.json';
const result = await runTurn({ model: scriptedModel(script), tools, input: 'Deploy api.', id: 'turn-1' });
if (result.status !== 'suspended') throw new Error(`expected the turn to wait for an approval, got ${result.status}`);

// Everything in a suspended result is plain JSON.
writeFileSync(file, JSON.stringify(result));
console.log(`process ${process.pid} waits for: ${result.pending.map((p) => `${p.call.id} ${p.call.name}`).join(', ')}`);
