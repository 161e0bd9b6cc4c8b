// fast-check is a peer dependency of @turnkit/check; anything but fast-check 4 gets a sentence
// that names the installed version and says what to install.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fastCheckVersionProblem } from '../src/peer.js';

describe('the fast-check peer', () => {
  it('accepts fast-check 4, including the one installed here', () => {
    expect(fastCheckVersionProblem('4.0.0')).toBeUndefined();
    expect(fastCheckVersionProblem(fc.__version)).toBeUndefined();
  });

  it.each([
    ['3.23.2', '@turnkit/check needs fast-check 4, but the installed fast-check is version 3.23.2: install fast-check@^4.'],
    ['5.0.0', '@turnkit/check needs fast-check 4, but the installed fast-check is version 5.0.0: install fast-check@^4.'],
    [
      undefined,
      '@turnkit/check needs fast-check 4, but the installed fast-check is of an unknown version: install fast-check@^4.',
    ],
  ])('refuses fast-check %s', (version, message) => {
    expect(fastCheckVersionProblem(version)).toBe(message);
  });
});
