import { toToolCall } from '../src/response.ts';
import { fromAISDKError } from '@turnkit/ai-sdk';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { testLog } from '../../../test-log.ts';

const numRuns = 500;

describe('mapping properties', () => {
  it('toToolCall never throws: valid JSON round-trips, anything else keeps the raw text with an inputError', () => {
    testLog(`toToolCall property: numRuns=${numRuns}`);
    fc.assert(
      fc.property(fc.oneof(fc.json(), fc.string()), (text) => {
        const call = toToolCall('id', 'tool', text);
        if (call.inputError === undefined) {
          expect(call.input).toEqual(text.trim() === '' ? {} : JSON.parse(text));
        } else {
          expect(call.input).toBe(text);
          expect(() => JSON.parse(text)).toThrow();
        }
      }),
      { numRuns },
    );
  });

  it('fromAISDKError never throws and always gives a kind and a message', () => {
    testLog(`fromAISDKError property: numRuns=${numRuns}`);
    fc.assert(
      fc.property(fc.anything(), (value) => {
        const error = fromAISDKError(value);
        expect(error.kind).not.toBe('');
        expect(error.message.length).toBeGreaterThan(0);
      }),
      { numRuns },
    );
  });
});
