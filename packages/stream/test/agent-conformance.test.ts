import type { TurnResult } from '@turnkit/inline';
import { agentConformance } from '@turnkit/testing/conformance';
import { describe, expect, it } from 'vitest';
import { resumeStreamTurn, streamTurn, type TurnStream, type TurnStreamEvent } from '../src/index.js';
import { agentScenarios } from '@turnkit/testing';

/** Reads every event (as a consumer would), then returns the result. */
async function readToEnd(stream: TurnStream<TurnResult>, events: TurnStreamEvent[] = []): Promise<TurnResult> {
  for await (const event of stream) events.push(event);
  return stream.result;
}

agentConformance(
  'stream',
  (options) => readToEnd(streamTurn(options)),
  (options) => readToEnd(resumeStreamTurn(options)),
);

describe('a streamed multi-agent turn', () => {
  it("every event carries the path of its agent: the child's deltas and messages are the researcher's", async () => {
    const scenario = agentScenarios.find((s) => s.name === 'delegate, then hand off');
    const run = scenario?.setup();
    if (run === undefined) throw new Error('the scenario is gone');
    const events: TurnStreamEvent[] = [];
    await readToEnd(streamTurn(run.options), events);
    const paths = new Set(events.filter((e) => e.type !== 'done').map((e) => (e.agentPath ?? []).join('/')));
    expect([...paths].sort()).toEqual(['supervisor', 'supervisor/researcher', 'writer']);
    const childText = events
      .filter((e) => e.type === 'text_delta' && e.agentPath?.join('/') === 'supervisor/researcher')
      .map((e) => (e.type === 'text_delta' ? e.text : ''))
      .join('');
    expect(childText).toBe('It opened in 1932.');
    const writerText = events.filter((e) => e.type === 'text_delta' && e.agentPath?.join('/') === 'writer');
    expect(writerText.length).toBeGreaterThan(0);
  });
});
