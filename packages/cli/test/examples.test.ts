// The example scenarios say true things: the trip planner's answer names the weekday of each
// flight it searched for (16 June 2025 was a Monday).
import type { ModelRequest } from '@turnkit/core';
import { describe, expect, it } from 'vitest';
import { scenario } from '../examples/trip-planner.js';

const request: ModelRequest = { messages: [], tools: [], toolChoice: 'auto', iteration: 1 };

describe('examples/trip-planner.ts', () => {
  it("the answer's flight weekdays are those of the dates searched", async () => {
    if (typeof scenario.model !== 'function') throw new Error('the trip planner exports a model function');
    const model = scenario.model({ startAt: 0 });
    const signal = new AbortController().signal;
    const first = await model.generate(request, { signal });
    await model.generate(request, { signal });
    const answer = (await model.generate(request, { signal })).text;
    const dates = first.toolCalls.filter((c) => c.name === 'search_flights').map((c) => (c.input as { date: string }).date);
    const weekday = (date: string): string =>
      new Date(`${date}T12:00:00Z`).toLocaleDateString('en-GB', { weekday: 'short', timeZone: 'UTC' });
    expect(dates).toEqual(['2025-06-14', '2025-06-16']);
    expect([...answer.matchAll(/FR\d+ (Mon|Tue|Wed|Thu|Fri|Sat|Sun) /g)].map((m) => m[1])).toEqual(dates.map(weekday));
  });
});
