// One meaning per name: a name exported by two packages must be the same thing (one package
// re-exporting another's declaration), never two different declarations under one name.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));

/** Every entry point (`exports` subpath) of every package, as a source file (its `@turnkit/source` target). */
function entryPoints(): string[] {
  const entries: string[] = [];
  for (const dir of readdirSync(join(REPO, 'packages'))) {
    const manifest = join(REPO, 'packages', dir, 'package.json');
    if (!existsSync(manifest)) continue;
    const { exports } = JSON.parse(readFileSync(manifest, 'utf8')) as { exports?: Record<string, unknown> };
    // A private tool (bench) has no entry point at all.
    for (const target of Object.values(exports ?? {})) {
      const source =
        typeof target === 'object' && target !== null ? (target as Record<string, unknown>)['@turnkit/source'] : undefined;
      if (typeof source === 'string') entries.push(join(REPO, 'packages', dir, source));
    }
  }
  return entries;
}

/** name → the places it is declared, per package that exports it. */
function exportedDeclarations(): Map<string, Map<string, Set<string>>> {
  const configPath = join(REPO, 'tsconfig.json');
  const config = ts.readConfigFile(configPath, (path) => ts.sys.readFile(path));
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, REPO);
  const entries = entryPoints();
  const program = ts.createProgram(entries, parsed.options);
  const checker = program.getTypeChecker();
  const names = new Map<string, Map<string, Set<string>>>();
  for (const entry of entries) {
    const source = program.getSourceFile(entry);
    const moduleSymbol = source === undefined ? undefined : checker.getSymbolAtLocation(source);
    if (moduleSymbol === undefined) continue;
    const pkg = entry.split('/packages/')[1]?.split('/')[0] ?? entry;
    for (const exported of checker.getExportsOfModule(moduleSymbol)) {
      const target = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
      const where = (target.declarations ?? []).map((d) => `${d.getSourceFile().fileName.replace(REPO, '')}:${d.pos}`);
      const byPackage = names.get(exported.name) ?? new Map<string, Set<string>>();
      const set = byPackage.get(pkg) ?? new Set<string>();
      for (const w of where) set.add(w);
      byPackage.set(pkg, set);
      names.set(exported.name, byPackage);
    }
  }
  return names;
}

describe('exported names', () => {
  it('a name exported by several packages is one declaration, re-exported', () => {
    const clashes: string[] = [];
    for (const [name, byPackage] of exportedDeclarations()) {
      if (byPackage.size < 2) continue;
      const declarations = new Set([...byPackage.values()].flatMap((set) => [...set]));
      if (declarations.size > 1) clashes.push(`${name}: ${[...byPackage.keys()].join(', ')} (${[...declarations].join(' | ')})`);
    }
    expect(clashes).toEqual([]);
  });
});
