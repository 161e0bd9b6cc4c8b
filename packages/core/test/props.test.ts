import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { definedProps } from '../src/props.js';

describe('definedProps', () => {
  it('keeps exactly the defined properties, with their values (numRuns 200)', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.option(fc.jsonValue(), { nil: undefined })), (given) => {
        const kept = definedProps(given);
        const expected = Object.fromEntries(Object.entries(given).filter(([, v]) => v !== undefined));
        expect(kept).toEqual(expected);
        expect(Object.keys(kept)).toEqual(Object.keys(expected));
      }),
      { numRuns: 200 },
    );
  });

  it('keeps null, false, 0 and the empty string', () => {
    expect(definedProps({ a: null, b: false, c: 0, d: '', e: undefined })).toEqual({ a: null, b: false, c: 0, d: '' });
  });
});
