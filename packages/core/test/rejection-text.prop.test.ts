// What the model reads when a person rejects a call: the reason, cleaned, then one sentence end
// (a reason that ends a sentence itself is not given a second full stop).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cleanReason, endSentence, rejectionText } from '@turnkit/core/internal';

const TAIL = ' A person declined this call; do not retry it unchanged.';

describe('rejectionText', () => {
  it('examples: no reason, a bare reason, a reason ending in a full stop, a question', () => {
    expect(rejectionText()).toBe(`rejected.${TAIL}`);
    expect(rejectionText('keep it')).toBe(`rejected: keep it.${TAIL}`);
    expect(rejectionText('keep it.')).toBe(`rejected: keep it.${TAIL}`);
    expect(rejectionText('why delete it?')).toBe(`rejected: why delete it?${TAIL}`);
  });

  it('endSentence adds a full stop only where no sentence end is', () => {
    expect(['over budget', 'over budget.', 'really?', 'no!', 'and so…'].map(endSentence)).toEqual([
      'over budget.',
      'over budget.',
      'really?',
      'no!',
      'and so…',
    ]);
  });

  it('holds the cleaned reason and never two full stops after it (numRuns 500, seed 31)', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 60 }), fc.constantFrom('', '.', '!', '?', '…', '..'), (words, end) => {
        const reason = `${words}${end}`;
        const text = rejectionText(reason);
        const clean = cleanReason(reason);
        expect(text.endsWith(TAIL)).toBe(true);
        const said = text.slice(0, -TAIL.length);
        expect(said).toBe(clean === '' ? 'rejected.' : /[.!?…]$/.test(clean) ? `rejected: ${clean}` : `rejected: ${clean}.`);
        if (!clean.endsWith('..')) expect(said.endsWith('..')).toBe(false);
      }),
      { numRuns: 500, seed: 31 },
    );
  });
});
