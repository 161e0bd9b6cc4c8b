// The thread corpus of @turnkit/testing, in-process: each turn is `runTurn` with the last result's
// transcript, the thread as the session its grants belong to, and the scenario's compaction.

import type { Message } from '@turnkit/core';
import { runTurn } from '@turnkit/inline';
import { threadScenarios } from '@turnkit/testing';
import { runThreadScenario, type ConformanceThreads } from '@turnkit/testing/internal';
import { describe, it } from 'vitest';

const inlineThreads: ConformanceThreads = ({ thread, dispatcherOptions: _made, ...options }) => {
  let transcript: readonly Message[] = [];
  return {
    async turn(input) {
      const result = await runTurn({ ...options, input, transcript, session: thread });
      transcript = result.transcript;
      return result;
    },
  };
};

describe('thread conformance: inline', () => {
  it.each(threadScenarios.map((s) => [s.name, s] as const))('%s', (_name, scenario) =>
    runThreadScenario(scenario, inlineThreads),
  );
});
