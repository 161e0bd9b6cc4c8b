// The saved trace context is read back from a file or a row: any value is answered, never thrown
// at, and a saved context reads back as the span context it came from.
import { TraceFlags } from '@opentelemetry/api';
import { readTraceContext, saveTraceContext } from '../src/trace-context.ts';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { testLog } from '../../../test-log.js';

const NUM_RUNS = 500;
const hex = (length: number) =>
  fc
    .string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: length, maxLength: length })
    .filter((s) => /[1-9a-f]/.test(s));

describe('saved trace contexts (property)', () => {
  it('save then read gives back the trace id, span id and sampled flag', () => {
    fc.assert(
      fc.property(hex(32), hex(16), fc.constantFrom(TraceFlags.NONE, TraceFlags.SAMPLED), (traceId, spanId, traceFlags) => {
        const read = readTraceContext(JSON.parse(JSON.stringify(saveTraceContext({ traceId, spanId, traceFlags }))));
        expect(read).toEqual({ ok: true, context: { traceId, spanId, traceFlags, isRemote: true } });
      }),
      { numRuns: NUM_RUNS },
    );
    testLog(`trace context round trip: numRuns ${NUM_RUNS}`);
  });

  it('any other value is refused with a reason, never thrown at', () => {
    fc.assert(
      fc.property(fc.oneof(fc.anything(), fc.record({ traceparent: fc.string(), tracestate: fc.anything() })), (value) => {
        const read = readTraceContext(value);
        if (!read.ok) expect(read.reason.length).toBeGreaterThan(0);
      }),
      { numRuns: NUM_RUNS },
    );
  });
});
