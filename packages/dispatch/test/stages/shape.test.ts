// Stage 9 on its own: every result leaves with a bounded JSON output.
import { describe, expect, it } from 'vitest';
import { shapeResult } from '../../src/shape.js';

describe('shapeResult', () => {
  it('keeps a JSON output, stop and modelOverride', () => {
    const raw = {
      callId: 'c1',
      name: 'x',
      output: { at: new Date(0) },
      isError: false,
      stop: { reason: 'done' },
      modelOverride: 'm',
    };
    expect(shapeResult(raw, 100)).toEqual({
      callId: 'c1',
      name: 'x',
      output: { at: '1970-01-01T00:00:00.000Z' },
      isError: false,
      stop: { reason: 'done' },
      modelOverride: 'm',
    });
  });

  it('makes a non-JSON output an error naming where the bad value is', () => {
    expect(shapeResult({ callId: 'c1', name: 'x', output: { a: () => 1 }, isError: false }, 100)).toEqual({
      callId: 'c1',
      name: 'x',
      output: "Tool 'x' returned a value that is not JSON (a function at $.a). The tool ran, but its output cannot be shown.",
      isError: true,
      errorKind: 'invalid_output',
    });
  });

  it('cuts a long output at maxOutputChars', () => {
    expect(shapeResult({ callId: 'c1', name: 'x', output: 'y'.repeat(12), isError: false }, 10).output).toBe(
      `${'y'.repeat(10)}…[truncated 2 chars]`,
    );
  });
});
