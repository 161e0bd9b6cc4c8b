// The names each package shows its users: for every entry point in a package.json `exports`
// (the root and each subpath), the names its source entry file exports, values and types alike,
// as the TypeScript compiler sees them (re-exports and `export *` followed).
//
// One counter serves both the public-names test (packages/bench/test/public-names.test.ts) and
// `pnpm structure`, so the figure in docs/architecture.md is the one the test guards.
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import ts from 'typescript';

/** One entry point: its import specifier and the source file it maps to. */
export interface EntryPoint {
  readonly packageName: string;
  /** The package's folder under packages/, e.g. `core`. */
  readonly dir: string;
  /** What a user imports, e.g. `@turnkit/core` or `@turnkit/core/internal`. */
  readonly specifier: string;
  readonly file: string;
}

interface ExportTarget {
  readonly '@turnkit/source'?: string;
}

/** Every entry point of every package under `root`/packages, from each package.json `exports`. */
export function entryPoints(root: string): EntryPoint[] {
  const packagesDir = join(root, 'packages');
  const entries: EntryPoint[] = [];
  for (const dir of readdirSync(packagesDir).sort()) {
    const manifestPath = join(packagesDir, dir, 'package.json');
    if (statSync(manifestPath, { throwIfNoEntry: false }) === undefined) continue;
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as {
      name: string;
      exports?: Record<string, ExportTarget | string>;
    };
    for (const [subpath, target] of Object.entries(manifest.exports ?? {})) {
      if (subpath === './package.json' || typeof target === 'string') continue;
      const source = target['@turnkit/source'];
      if (source === undefined) continue;
      const specifier = subpath === '.' ? manifest.name : `${manifest.name}/${subpath.slice(2)}`;
      entries.push({ packageName: manifest.name, dir, specifier, file: resolve(packagesDir, dir, source) });
    }
  }
  return entries;
}

/** Sorted exported names per entry specifier, for every entry point under `root`. */
export function publicNames(root: string): Record<string, string[]> {
  const entries = entryPoints(root);
  const paths: Record<string, string[]> = {};
  for (const entry of entries) paths[entry.specifier] = [entry.file];
  const program = ts.createProgram({
    rootNames: entries.map((e) => e.file),
    options: {
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      allowImportingTsExtensions: true,
      noEmit: true,
      skipLibCheck: true,
      types: [],
      paths,
    },
  });
  const checker = program.getTypeChecker();
  const names: Record<string, string[]> = {};
  for (const entry of entries) {
    const source = program.getSourceFile(entry.file);
    const symbol = source === undefined ? undefined : checker.getSymbolAtLocation(source);
    const exported = symbol === undefined ? [] : checker.getExportsOfModule(symbol).map((s) => s.name);
    names[entry.specifier] = [...new Set(exported)].sort();
  }
  return names;
}

/** Exported names per package folder (root and subpaths together). */
export function namesPerPackage(root: string, names = publicNames(root)): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const entry of entryPoints(root)) counts[entry.dir] = (counts[entry.dir] ?? 0) + (names[entry.specifier]?.length ?? 0);
  return counts;
}

/** Where the reviewed list of public names is kept (one sorted array per entry point). */
export const NAMES_FILE = 'packages/bench/public-names.json';

/** The list as it is written to NAMES_FILE: entry points sorted, names sorted, one per line. */
export function namesFileText(names: Record<string, string[]>): string {
  const sorted = Object.fromEntries(
    Object.keys(names)
      .sort()
      .map((entry) => [entry, names[entry]]),
  );
  return `${JSON.stringify(sorted, null, 2)}\n`;
}

const isMain = process.argv[1] !== undefined && import.meta.url === new URL(`file://${process.argv[1]}`).href;
if (isMain) {
  // pnpm public-names: writes the current names to NAMES_FILE, for review in the diff.
  const root = process.cwd();
  writeFileSync(join(root, NAMES_FILE), namesFileText(publicNames(root)));
  process.stdout.write(`Wrote ${NAMES_FILE}; review the added and removed names in its diff.\n`);
}
