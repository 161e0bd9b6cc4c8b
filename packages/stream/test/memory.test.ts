import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { Model, ModelStreamPart } from '@turnkit/core';
import { describe, expect, it } from 'vitest';
import { streamTurn } from '../src/index.js';
import { testLog } from '../../../test-log.ts';

// A full GC on demand, without starting the test process with --expose-gc.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const DELTAS = 1_000_000;
const MAX_GROWTH_BYTES = 20 * 1024 * 1024;

/** A model that streams `count` one-character deltas, made as they are pulled (nothing prebuilt). */
function manyDeltas(count: number): Model & { yielded: number } {
  const model = {
    yielded: 0,
    generate: () => Promise.reject(new Error('manyDeltas only streams.')),
    async *stream(): AsyncGenerator<ModelStreamPart> {
      for (let i = 0; i < count; i++) {
        model.yielded += 1;
        yield { type: 'text_delta', text: 'x' };
      }
      yield { type: 'finish' };
    },
  };
  return model;
}

function heapAfterGc(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

describe('memory', () => {
  it(`stays flat while ${DELTAS.toLocaleString('en')} deltas pass through a slow reader`, async () => {
    const model = manyDeltas(DELTAS);
    const stream = streamTurn({ model, input: 'go' });
    let seen = 0;
    let baseline = 0;
    let peak = 0;
    let maxAhead = 0;
    for await (const event of stream) {
      if (event.type !== 'text_delta') continue;
      seen += 1;
      maxAhead = Math.max(maxAhead, model.yielded - seen);
      // Slow: every 100 deltas the reader gives up the event loop, so a producer that did not
      // wait for it would run far ahead.
      if (seen % 100 === 0) await new Promise((resolve) => setImmediate(resolve));
      if (seen === 20_000) baseline = heapAfterGc();
      if (seen % 200_000 === 0) peak = Math.max(peak, heapAfterGc() - baseline);
    }
    const result = await stream.result;
    testLog(
      `memory: ${seen} deltas, heap growth after the first 20,000 at most ${(peak / 1024 / 1024).toFixed(1)} MB (bound ${MAX_GROWTH_BYTES / 1024 / 1024} MB), model at most ${maxAhead} parts ahead`,
    );
    expect(seen).toBe(DELTAS);
    expect(result.text.length).toBe(DELTAS);
    expect(maxAhead).toBeLessThanOrEqual(2);
    expect(peak).toBeLessThan(MAX_GROWTH_BYTES);
  });
});
