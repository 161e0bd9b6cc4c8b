// canonicalJson's fast path for plain strings must give exactly what JSON.stringify gives, for any
// JSON value: sorted keys are the only difference allowed.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../src/signature.ts';
import type { JsonValue } from '@turnkit/core';
import { testLog } from '../../../test-log.ts';

/** The reference: sort keys at every depth, then JSON.stringify. */
function reference(value: JsonValue): string {
  const sort = (v: JsonValue): JsonValue => {
    if (Array.isArray(v)) return v.map(sort);
    if (v !== null && typeof v === 'object') {
      const out: Record<string, JsonValue> = {};
      for (const key of Object.keys(v).sort())
        Object.defineProperty(out, key, { value: sort((v as Record<string, JsonValue>)[key] as JsonValue), enumerable: true });
      return out;
    }
    return v;
  };
  return JSON.stringify(sort(value));
}

describe('canonicalJson', () => {
  it('equals JSON.stringify of the key-sorted value, for strings with quotes, escapes, controls and surrogates', () => {
    const numRuns = 2000;
    testLog(`canonicalJson property: numRuns=${numRuns}`);
    const text = fc.string({ unit: 'binary', maxLength: 12 });
    const json = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: 'small' },
        fc.constant(null),
        fc.boolean(),
        fc.double({ noNaN: true, noDefaultInfinity: true }),
        text,
        fc.array(tie('value'), { maxLength: 4 }),
        fc.dictionary(text, tie('value'), { maxKeys: 4 }),
      ),
    })).value as fc.Arbitrary<JsonValue>;
    fc.assert(
      fc.property(json, (value) => {
        expect(canonicalJson(value)).toBe(reference(value));
      }),
      { numRuns },
    );
  });
});

describe('sameBatch', () => {
  it('is true exactly when the batch signatures are equal (ids and key order ignored)', async () => {
    const { batchSignature, sameBatch } = await import('../src/signature.ts');
    const numRuns = 2000;
    testLog(`sameBatch property: numRuns=${numRuns}`);
    const small = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: 'small' },
        fc.constantFrom(null, true, 0, -0, 1, 'a', 'b'),
        fc.array(tie('value'), { maxLength: 3 }),
        fc.dictionary(fc.constantFrom('a', 'b', 'c', '__proto__'), tie('value'), { maxKeys: 3 }),
      ),
    })).value as fc.Arbitrary<JsonValue>;
    const call = fc.record({ id: fc.string({ maxLength: 3 }), name: fc.constantFrom('read', 'write'), input: small });
    const batch = fc.array(call, { maxLength: 3 });
    // Reorder every object's keys, so equal batches with different key order are generated often.
    const reorder = (v: JsonValue): JsonValue => {
      if (Array.isArray(v)) return v.map(reorder);
      if (v === null || typeof v !== 'object') return v;
      const out: Record<string, JsonValue> = {};
      for (const key of Object.keys(v).reverse())
        Object.defineProperty(out, key, { value: reorder((v as Record<string, JsonValue>)[key] as JsonValue), enumerable: true });
      return out;
    };
    fc.assert(
      fc.property(batch, batch, fc.boolean(), (a, b, same) => {
        const other = same ? a.map((c, i) => ({ ...c, id: `x${i}`, input: reorder(c.input) })) : b;
        expect(sameBatch(a, other)).toBe(batchSignature(a) === batchSignature(other));
      }),
      { numRuns },
    );
  });
});
