// The core has no runtime dependency and no I/O: its package.json declares no dependencies, and its
// sources import nothing but each other (no packages, no 'node:' modules, no dynamic import/require).
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = new URL('../', import.meta.url);
const srcDir = fileURLToPath(new URL('src/', root));
const sources = readdirSync(srcDir, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.ts'));

/** Every module specifier in a source: static imports/exports, side-effect imports, import(), require(). */
function specifiers(code: string): string[] {
  const found: string[] = [];
  const patterns = [
    /\bfrom\s*['"]([^'"]+)['"]/g,
    /\bimport\s*['"]([^'"]+)['"]/g,
    /\bimport\s*\(\s*['"`]?([^'"`)]*)/g,
    /\brequire\s*\(\s*['"`]?([^'"`)]*)/g,
  ];
  for (const pattern of patterns) for (const match of code.matchAll(pattern)) found.push(match[1] ?? '');
  return found;
}

describe('@turnkit/core has no dependency', () => {
  it("package.json's dependencies are empty or absent, and there are no peer dependencies", () => {
    const pkg = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as Record<string, unknown>;
    expect(Object.keys((pkg.dependencies as object | undefined) ?? {})).toEqual([]);
    expect(Object.keys((pkg.peerDependencies as object | undefined) ?? {})).toEqual([]);
  });

  it('the scan sees the sources', () => {
    expect(sources).toContain('turn.ts');
    expect(specifiers(readFileSync(`${srcDir}turn.ts`, 'utf8'))).toContain('./events.js');
    expect(specifiers("import x from 'node:fs'; const y = await import('zod'); require('os');")).toEqual([
      'node:fs',
      'zod',
      'os',
    ]);
  });

  it.each(sources)('src/%s imports only relative modules of core', (file) => {
    const code = readFileSync(`${srcDir}${file}`, 'utf8');
    const outside = specifiers(code).filter((spec) => !/^\.\.?\/[\w./-]+\.js$/.test(spec));
    expect(outside).toEqual([]);
  });
});
