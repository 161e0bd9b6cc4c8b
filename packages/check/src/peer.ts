// fast-check is a peer dependency: the arbitraries this package exports are built with the
// user's fast-check, so they mix with the user's own. It must be fast-check 4.

import fc from 'fast-check';

/** Why this fast-check `version` cannot be used, or undefined when it is a fast-check 4. */
export function fastCheckVersionProblem(version: unknown): string | undefined {
  const major = typeof version === 'string' ? Number.parseInt(version, 10) : Number.NaN;
  if (major === 4) return undefined;
  return `@turnkit/check needs fast-check 4, but the installed fast-check is ${typeof version === 'string' ? `version ${version}` : 'of an unknown version'}: install fast-check@^4.`;
}

const problem = fastCheckVersionProblem(fc.__version);
if (problem !== undefined) throw new Error(problem);
