import { describe, expect, it } from 'vitest';
import { MAX_RETRY_AFTER_MS, retryDelayMs } from '../src/model.js';

describe('retryDelayMs: the wait before a model retry', () => {
  const error = (data?: unknown) => ({ kind: 'rate_limited', message: 'slow down', retryable: true, ...(data === undefined ? {} : { data: data as never }) });

  it('is the backoff when the provider gave no hint', () => {
    expect(retryDelayMs(error(), 400)).toBe(400);
    expect(retryDelayMs(error({ statusCode: 429 }), 400)).toBe(400);
  });

  it("waits for the provider's Retry-After when it is longer than the backoff", () => {
    expect(retryDelayMs(error({ retryAfterMs: 3_000 }), 400)).toBe(3_000);
    expect(retryDelayMs(error({ retryAfterMs: 100 }), 400)).toBe(400);
  });

  it('caps the hint at a minute and ignores nonsense', () => {
    expect(retryDelayMs(error({ retryAfterMs: 3_600_000 }), 400)).toBe(MAX_RETRY_AFTER_MS);
    expect(retryDelayMs(error({ retryAfterMs: -5 }), 400)).toBe(400);
    expect(retryDelayMs(error({ retryAfterMs: 'soon' }), 400)).toBe(400);
    expect(retryDelayMs(error([1, 2]), 400)).toBe(400);
  });
});
