// Run with `node --conditions=source condition.mjs` in the project: a user's own `source` condition
// must not reach turnkit's sources (the repository's condition is @turnkit/source, not published).
const core = await import('@turnkit/core');
console.log(typeof core.step);
