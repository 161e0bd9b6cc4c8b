// A TypeScript fixture as a plain Node script, for tests that start it as a process many times.
// Starting a process through tsx costs about a second of CPU more than plain Node (its loader
// thread, and the repository's sources transformed module by module on every start); the crash,
// lock and partition drills start dozens. esbuild (the transformer tsx uses) bundles the fixture
// once per test file, with the repository sources it imports by relative path; packages
// (`@turnkit/*`, zod, pg, PGlite) stay imports and resolve to their builds (dist), which `pnpm test`
// makes before the tests run.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { buildSync } from 'esbuild';

const built = new Map<string, string>();

/**
 * Node options for a fixture process that opens PGlite: V8 compiles PGlite's WebAssembly with its
 * baseline compiler only. A process that opens a store, drives a turn and exits spends about as
 * much CPU again recompiling PGlite's hot functions with the optimizing compiler as it saves by
 * running them optimized (a crash drill's recovering process: 2.7 s of CPU instead of 5.2 s).
 * Only the speed of the WebAssembly changes, not what it does.
 */
export const FIXTURE_NODE_OPTIONS: readonly string[] = ['--liftoff-only'];

/** The path of a plain-Node ES module built from the TypeScript file `entry`, made once per process. */
export function nodeScript(entry: string): string {
  const known = built.get(entry);
  if (known !== undefined) return known;
  // Inside the fixture's package, so its packages resolve from that package's node_modules.
  let packageDir = dirname(entry);
  while (!existsSync(join(packageDir, 'package.json')) && dirname(packageDir) !== packageDir) packageDir = dirname(packageDir);
  const outDir = join(packageDir, 'node_modules', '.cache', 'turnkit-fixtures');
  mkdirSync(outDir, { recursive: true });
  const { outputFiles } = buildSync({
    entryPoints: [entry],
    bundle: true,
    packages: 'external',
    format: 'esm',
    platform: 'node',
    target: 'node20',
    logLevel: 'error',
    write: false,
  });
  const code = outputFiles[0]?.contents ?? new Uint8Array();
  // Named by its content: test files running at once share one build, and a changed fixture gets a new one.
  const hash = createHash('sha256').update(code).digest('hex').slice(0, 16);
  const outfile = join(outDir, `${basename(entry).replace(/\.[cm]?ts$/, '')}-${hash}.mjs`);
  if (!existsSync(outfile)) {
    const partial = `${outfile}.${process.pid}`;
    writeFileSync(partial, code);
    renameSync(partial, outfile);
  }
  built.set(entry, outfile);
  return outfile;
}
