import { readFileSync } from 'node:fs';
import { resumeTurn } from '@turnkit/inline';
import { scriptedModel, transcriptLines } from '@turnkit/testing';
import { script, tools } from './agent.js';

const file = process.argv[2] ?? 'turn.json';
const saved = JSON.parse(readFileSync(file, 'utf8'));

// The script goes on after the replies the first process used (a real model needs no such step).
const model = scriptedModel(script, { startAt: saved.usage.modelCalls });
const result = await resumeTurn({ ...saved, model, tools, decisions: { call_1: { type: 'approve' } } });

console.log(transcriptLines(result.transcript).join('\n'));
console.log(result.status, result.output);
