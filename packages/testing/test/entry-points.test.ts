// Importing '@turnkit/testing' must not load vitest (an optional peer): a program that uses the
// scripted models or the fake server runs without a test framework. Only the conformance suite,
// '@turnkit/testing/conformance', loads it. Each import runs in a fresh Node process whose module
// resolve hook records every module resolved inside a vitest package.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const packageDir = fileURLToPath(new URL('..', import.meta.url));

/** The export condition that points at the TypeScript sources (read, not assumed). */
function sourceCondition(): string {
  const manifest = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as {
    exports: Record<string, Record<string, string>>;
  };
  const entry = Object.entries(manifest.exports['.'] ?? {}).find(([, target]) => target.endsWith('.ts'));
  if (entry === undefined)
    throw new Error("packages/testing/package.json: no export condition of '.' points at a .ts source file.");
  return entry[0];
}

/** The vitest modules a fresh `node` resolves while importing `specifier` from the package's sources. */
function vitestModulesLoadedBy(specifier: string): string[] {
  const dir = mkdtempSync(join(tmpdir(), 'turnkit-entry-'));
  const record = join(dir, 'resolved.txt');
  writeFileSync(record, '');
  writeFileSync(
    join(dir, 'hooks.mjs'),
    `import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, nextResolve) {
  const result = await nextResolve(specifier, context);
  if (result.url.includes('/node_modules/vitest/')) appendFileSync(${JSON.stringify(record)}, result.url + '\\n');
  return result;
}
`,
  );
  writeFileSync(
    join(dir, 'register.mjs'),
    "import { register } from 'node:module';\nregister('./hooks.mjs', import.meta.url);\n",
  );
  // The import may throw outside a vitest run (vitest refuses to be used there); the hook has
  // recorded what was resolved by then, which is all this checks.
  const child = spawnSync(
    process.execPath,
    [
      '--import',
      'tsx',
      '--import',
      join(dir, 'register.mjs'),
      `--conditions=${sourceCondition()}`,
      '--input-type=module',
      '-e',
      `await import(${JSON.stringify(specifier)});`,
    ],
    { cwd: packageDir, encoding: 'utf8' },
  );
  const resolved = readFileSync(record, 'utf8')
    .split('\n')
    .filter((line) => line !== '');
  rmSync(dir, { recursive: true, force: true });
  if (specifier === '@turnkit/testing' && child.status !== 0)
    throw new Error(`node could not import ${specifier}:\n${child.stderr}`);
  return resolved;
}

describe('entry points', () => {
  it("'@turnkit/testing' loads no vitest module", () => {
    expect(vitestModulesLoadedBy('@turnkit/testing')).toEqual([]);
  });

  it("'@turnkit/testing/conformance' loads vitest", () => {
    expect(vitestModulesLoadedBy('@turnkit/testing/conformance').length).toBeGreaterThan(0);
  });
});
