// Tool names from any server: whatever names a server sends, the names offered to the model are
// valid for providers, unique (also ignoring case), prefixed with the server, and stable.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { toolNames } from '../src/names.js';
import { testLog } from '../../../test-log.js';

const NUM_RUNS = 300;
const names = fc.array(fc.oneof(fc.string({ maxLength: 90 }), fc.constantFrom('a', 'A', 'a.b', 'a_b', 'A_B', 'x'.repeat(70))), {
  maxLength: 12,
});

describe('toolNames (property)', () => {
  it('valid, unique ignoring case, prefixed and stable for any list of server names', () => {
    fc.assert(
      fc.property(fc.constantFrom('s', 'north', 'a-very-long-server-name-of-32-ch'), names, (server, given) => {
        const out = toolNames(server, given);
        expect(out).toHaveLength(given.length);
        for (const name of out) {
          expect(name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
          expect(name.startsWith(`${server}__`)).toBe(true);
        }
        expect(new Set(out.map((n) => n.toLowerCase())).size).toBe(out.length);
        expect(toolNames(server, given)).toEqual(out);
        // A name that is already valid and free keeps its plain form.
        if (given[0] !== undefined && /^[a-zA-Z0-9_-]+$/.test(given[0]) && server.length + 2 + given[0].length <= 64)
          expect(out[0]).toBe(`${server}__${given[0]}`);
      }),
      { numRuns: NUM_RUNS },
    );
    testLog(`toolNames property: numRuns ${NUM_RUNS}`);
  });

  it('names already taken by another server are never reused', () => {
    fc.assert(
      fc.property(names, names, (first, second) => {
        const taken = new Set<string>();
        const a = toolNames('s', first, taken);
        const b = toolNames('s', second, taken);
        expect(new Set([...a, ...b].map((n) => n.toLowerCase())).size).toBe(a.length + b.length);
      }),
      { numRuns: NUM_RUNS },
    );
  });
});
