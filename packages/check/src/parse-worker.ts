// The worker thread of `ParsePass` (parse-pass.ts): parses each batch of state texts, answers the
// problems on its port, then counts the batch in the shared counter the explorer waits on.
import { workerData } from 'node:worker_threads';
import type { MessagePort } from 'node:worker_threads';
import { parseProblemOfText } from './invariants.js';
import type { ParseAnswer, ParseBatch } from './parse-pass.js';

const { port, done, name } = workerData as { port: MessagePort; done: Int32Array; name: string };
port.on('message', (batch: ParseBatch) => {
  const answer: ParseAnswer = [];
  batch.texts.split('\n').forEach((text, i) => {
    const problem = parseProblemOfText(text, name);
    if (problem !== undefined) answer.push([batch.indexes[i] as number, problem]);
  });
  port.postMessage({ seq: batch.seq, problems: answer });
  Atomics.add(done, 0, 1);
  Atomics.notify(done, 0);
});
