// The interpreter conformance corpus of @turnkit/testing, run through stored turns (PGlite in
// memory): each scenario is submitted, run by workers, decided through `store.decide` and read
// back with `store.get`, and must give the transcript and outcome every interpreter gives (see
// store-interpreter.ts). Then the corpus again with the turn handed from one worker to a fresh one
// after its k-th effect, for every k: a stored turn must end the same whichever worker finishes it.

import { errorMessage } from '@turnkit/core/internal';
import { openStore, type Store } from '@turnkit/store';
import { scenarios } from '@turnkit/testing';
import { runScenario } from '@turnkit/testing/internal';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storeInterpreter } from './store-interpreter.js';

/** Scenarios a stored turn cannot run, and why. */
const skipped: Readonly<Record<string, string>> = {
  'system prompt and earlier transcript':
    'store.submit takes an input only: a stored turn cannot start from an earlier transcript',
  'approval: expire':
    "the store asks no approve callback (a call left out stays parked and the turn is reported suspended); expiry of a stored approval is a durable deadline (a tool's or agent's approvalTimeoutMs), tested in thin-driver.test.ts",
  'cancel during a model call':
    "the script throws the model call's AbortError at once, as if the interpreter's own signal had aborted it; a stored turn hears a cancel through its inbox (at its next lease renewal), so the model's error fails the turn first",
};

/** Scenarios that run through the store but not when the turn is handed back, and why. */
const skippedWhenHandedBack: Readonly<Record<string, string>> = {};

const runnable = scenarios.filter((s) => !Object.hasOwn(skipped, s.name)).map((s) => [s.name, s] as const);
const runnableHandedBack = runnable.filter(([name]) => !Object.hasOwn(skippedWhenHandedBack, name));

let store: Store;
beforeAll(async () => {
  store = await openStore('memory://');
});
afterAll(async () => {
  await store?.close();
});

it('skips only scenarios that exist, and runs the rest', () => {
  const names = scenarios.map((s) => s.name);
  for (const name of [...Object.keys(skipped), ...Object.keys(skippedWhenHandedBack)]) expect(names).toContain(name);
  expect(runnable).toHaveLength(scenarios.length - Object.keys(skipped).length);
  expect(runnableHandedBack).toHaveLength(runnable.length - Object.keys(skippedWhenHandedBack).length);
});

describe('interpreter conformance: store (PGlite)', () => {
  it.each(runnable)('%s', async (_name, scenario) => {
    const { run, resume } = storeInterpreter(store);
    await runScenario(scenario, run, { resume });
  });
});

/** Past this many effects a scenario is not a conformance scenario any more: something loops. */
const MAX_EFFECTS = 200;

describe('interpreter conformance: store (PGlite), handed to a fresh worker after every effect', () => {
  it.each(runnableHandedBack)('%s', async (_name, scenario) => {
    let k = 1;
    for (; k <= MAX_EFFECTS; k += 1) {
      const interpreter = storeInterpreter(store, { handBackAfter: k });
      try {
        await runScenario(scenario, interpreter.run, { resume: interpreter.resume });
      } catch (error) {
        throw new Error(`handed back after effect ${k} of ${interpreter.effects()}: ${errorMessage(error)}`);
      }
      // The turn had no effect after the k-th: every boundary has been tried.
      if (!interpreter.handedBack()) break;
    }
    expect(k).toBeGreaterThan(1);
    expect(k).toBeLessThanOrEqual(MAX_EFFECTS);
  });
});
