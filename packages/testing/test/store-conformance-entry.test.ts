import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
  exports: Record<string, Record<string, string>>;
};

it('the store conformance suite (which imports vitest) is a subpath, not part of the main entry', () => {
  expect(pkg.exports['./store-conformance']).toEqual({
    types: './dist/store-conformance.d.ts',
    '@turnkit/source': './src/store-conformance.ts',
    default: './dist/store-conformance.js',
  });
  const index = readFileSync(new URL('../src/index.ts', import.meta.url), 'utf8');
  expect(index).not.toMatch(/store-conformance/);
});
