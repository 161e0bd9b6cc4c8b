// The shape of the sources: for each package's src/, its lines, the names it exports (the counter
// of the public-names test), its largest function, its import cycles, and the last measured CI
// time, before -> after. Functions are measured by the lines they span (a nested function counts
// inside its parent too), so the largest one is what a reader has to hold on one screen.
//
//   pnpm structure                          before -> after, as a table
//   pnpm structure --write-doc              the same, also into docs/architecture.md ("The house in figures")
//   pnpm structure --figures [--root <dir>] this checkout's (or another's) figures as JSON, the format of
//                                           packages/bench/structure-before.json
//   pnpm structure --shape [--dir test] [--json]  per package: files, lines, largest function, long files
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import ts from 'typescript';
import { namesPerPackage, publicNames } from './public-names.js';

export interface FunctionSize {
  readonly file: string;
  readonly name: string;
  readonly line: number;
  readonly lines: number;
}

export interface PackageShape {
  readonly name: string;
  readonly files: number;
  readonly lines: number;
  readonly largest: FunctionSize | null;
  readonly longFiles: ReadonlyArray<{ readonly file: string; readonly lines: number }>;
}

const FILE_LIMIT = 400;

/** Every function-like node in one source text, with the lines it spans. */
export function functionSizes(file: string, text: string): FunctionSize[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const sizes: FunctionSize[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
      const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      sizes.push({ file, name: functionName(node), line: start + 1, lines: end - start + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return sizes;
}

function functionName(node: ts.Node): string {
  const named = node as { name?: ts.Node };
  if (named.name !== undefined && (ts.isIdentifier(named.name) || ts.isStringLiteral(named.name))) return named.name.text;
  const parent = node.parent;
  if (parent !== undefined && ts.isVariableDeclaration(parent) && ts.isIdentifier(parent.name)) return parent.name.text;
  if (parent !== undefined && ts.isPropertyAssignment(parent) && ts.isIdentifier(parent.name)) return parent.name.text;
  return '(anonymous)';
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir).sort()) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) out.push(...sourceFiles(path));
    else if (path.endsWith('.ts') && !path.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

/** The shape of every packages/<name>/<dir> under `root` (dir: `src` or `test`). */
export function measure(root: string, dir = 'src'): PackageShape[] {
  const packagesDir = join(root, 'packages');
  return readdirSync(packagesDir)
    .sort()
    .filter((name) => statSync(join(packagesDir, name, dir), { throwIfNoEntry: false })?.isDirectory() === true)
    .map((name) => {
      let lines = 0;
      let largest: FunctionSize | null = null;
      const longFiles: Array<{ file: string; lines: number }> = [];
      const files = sourceFiles(join(packagesDir, name, dir));
      for (const path of files) {
        const text = readFileSync(path, 'utf8');
        const file = relative(root, path);
        const count = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
        lines += count;
        if (count > FILE_LIMIT) longFiles.push({ file, lines: count });
        for (const size of functionSizes(file, text)) if (largest === null || size.lines > largest.lines) largest = size;
      }
      return { name, files: files.length, lines, largest, longFiles };
    });
}

export function formatShape(shapes: readonly PackageShape[]): string {
  const rows = shapes.map((s) => {
    const largest = s.largest === null ? '-' : `${s.largest.lines} (${s.largest.name}, ${s.largest.file}:${s.largest.line})`;
    const long = s.longFiles.map((f) => `${f.file.split('/').pop()} ${f.lines}`).join(', ') || '-';
    return `| ${s.name} | ${s.files} | ${s.lines} | ${largest} | ${long} |`;
  });
  const top = shapes.flatMap((s) => (s.largest === null ? [] : [s.largest])).sort((a, b) => b.lines - a.lines)[0];
  return [
    `| package | files | lines | largest function (lines) | files over ${FILE_LIMIT} lines |`,
    '| --- | ---: | ---: | --- | --- |',
    ...rows,
    '',
    `largest function: ${top === undefined ? '-' : `${top.lines} lines (${top.name}, ${top.file}:${top.line})`}`,
    `files over ${FILE_LIMIT} lines: ${shapes.reduce((n, s) => n + s.longFiles.length, 0)}`,
  ].join('\n');
}

/** Import cycles among one folder's files: the strongly connected groups of more than one file. */
export function importCycles(dir: string): string[][] {
  const files = sourceFiles(dir);
  const known = new Set(files);
  const edges = new Map<string, string[]>();
  for (const file of files) {
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, false);
    const targets: string[] = [];
    const visit = (node: ts.Node): void => {
      let specifier: ts.Expression | undefined;
      if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier !== undefined)
        specifier = node.moduleSpecifier;
      else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) specifier = node.arguments[0];
      if (specifier !== undefined && ts.isStringLiteral(specifier) && specifier.text.startsWith('.')) {
        const base = resolve(dirname(file), specifier.text);
        const target = [base.replace(/\.js$/, '.ts'), base, `${base}.ts`, join(base, 'index.ts')].find((f) => known.has(f));
        if (target !== undefined) targets.push(target);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
    edges.set(file, targets);
  }
  // Tarjan's strongly connected components.
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const connect = (file: string): void => {
    index.set(file, counter);
    low.set(file, counter);
    counter += 1;
    stack.push(file);
    onStack.add(file);
    for (const next of edges.get(file) ?? []) {
      if (!index.has(next)) {
        connect(next);
        low.set(file, Math.min(low.get(file) ?? 0, low.get(next) ?? 0));
      } else if (onStack.has(next)) low.set(file, Math.min(low.get(file) ?? 0, index.get(next) ?? 0));
    }
    if (low.get(file) === index.get(file)) {
      const group: string[] = [];
      let member: string | undefined;
      do {
        member = stack.pop();
        if (member === undefined) break;
        onStack.delete(member);
        group.push(member);
      } while (member !== file);
      if (group.length > 1) cycles.push(group.sort());
    }
  };
  for (const file of files) if (!index.has(file)) connect(file);
  return cycles;
}

/** One package's figures in "the house in figures". */
export interface PackageFigures {
  readonly name: string;
  readonly lines: number;
  /** Names exported by its entry points (root and subpaths), internal ones included. */
  readonly names: number;
  /** Of those, the names behind an `/internal` subpath (turnkit's own plumbing, not a user's face). */
  readonly internalNames: number;
  readonly largest: FunctionSize | null;
  readonly cycles: number;
}

export interface HouseFigures {
  /** What was measured, and how (in the checked-in before figures). */
  readonly measured?: string;
  readonly packages: readonly PackageFigures[];
  /** The last measured CI time in seconds (an input: packages/bench/ci-seconds.json). */
  readonly ciSeconds: number | null;
}

/** Where the maintainers record the last measured CI time (`{ "seconds": n }`), after a CI run. */
export const CI_SECONDS_FILE = 'packages/bench/ci-seconds.json';
/** The figures of the main commit before the faces were made small (8898395), measured by `--figures`. */
export const BEFORE_FILE = 'packages/bench/structure-before.json';

/** The figures of the checkout at `root`. */
export function houseFigures(root: string): HouseFigures {
  const names = publicNames(root);
  const counts = namesPerPackage(root, names);
  const internal: Record<string, number> = {};
  for (const [specifier, list] of Object.entries(names)) {
    if (!specifier.endsWith('/internal')) continue;
    const dir = specifier.split('/')[1] ?? '';
    internal[dir] = (internal[dir] ?? 0) + list.length;
  }
  const packages = measure(root).map((shape) => ({
    name: shape.name,
    lines: shape.lines,
    names: counts[shape.name] ?? 0,
    internalNames: internal[shape.name] ?? 0,
    largest: shape.largest,
    cycles: importCycles(join(root, 'packages', shape.name, 'src')).length,
  }));
  const ciFile = join(root, CI_SECONDS_FILE);
  const ciSeconds = existsSync(ciFile) ? (JSON.parse(readFileSync(ciFile, 'utf8')) as { seconds: number }).seconds : null;
  return { packages, ciSeconds };
}

const int = (n: number): string => n.toLocaleString('en-US');
const names = (p: PackageFigures | undefined): string =>
  p === undefined ? '-' : p.internalNames > 0 ? `${p.names} (${p.internalNames} internal)` : String(p.names);
const change = (before: string, after: string): string => (before === after ? after : `${before} → ${after}`);

/** Before -> after, as a Markdown table and a few lines of totals. */
export function formatComparison(before: HouseFigures, after: HouseFigures): string {
  const all = [...new Set([...before.packages, ...after.packages].map((p) => p.name))].sort();
  const find = (figures: HouseFigures, name: string) => figures.packages.find((p) => p.name === name);
  const rows = all.map((name) => {
    const b = find(before, name);
    const a = find(after, name);
    const cell = (f: (p: PackageFigures) => string) => change(b === undefined ? '-' : f(b), a === undefined ? '-' : f(a));
    return `| ${name} | ${cell((p) => int(p.lines))} | ${change(names(b), names(a))} | ${cell((p) => String(p.largest?.lines ?? '-'))} | ${cell((p) => String(p.cycles))} |`;
  });
  const sum = (figures: HouseFigures, f: (p: PackageFigures) => number) => figures.packages.reduce((n, p) => n + f(p), 0);
  const top = (figures: HouseFigures) =>
    figures.packages.flatMap((p) => (p.largest === null ? [] : [p.largest])).sort((x, y) => y.lines - x.lines)[0];
  const largest = (f: FunctionSize | undefined) => (f === undefined ? '-' : `${f.lines} lines (${f.name}, ${f.file})`);
  const publicOf = (figures: HouseFigures) => sum(figures, (p) => p.names - p.internalNames);
  const ci = (s: number | null) => (s === null ? '-' : `${int(s)} s`);
  return [
    '| package | lines of src | exported names | largest function (lines) | import cycles |',
    '| --- | ---: | ---: | ---: | ---: |',
    ...rows,
    `| all | ${change(int(sum(before, (p) => p.lines)), int(sum(after, (p) => p.lines)))} | ${change(String(sum(before, (p) => p.names)), String(sum(after, (p) => p.names)))} | ${change(String(top(before)?.lines ?? '-'), String(top(after)?.lines ?? '-'))} | ${change(String(sum(before, (p) => p.cycles)), String(sum(after, (p) => p.cycles)))} |`,
    '',
    `- exported names outside \`/internal\` subpaths: ${change(String(publicOf(before)), String(publicOf(after)))}`,
    `- largest function: ${change(largest(top(before)), largest(top(after)))}`,
    `- CI time, last measured: ${change(ci(before.ciSeconds), ci(after.ciSeconds))} (an input, not measured here: update \`${CI_SECONDS_FILE}\` after a CI run)`,
  ].join('\n');
}

const DOC = 'docs/architecture.md';
const DOC_START = '<!-- house-figures:start (generated by `pnpm structure --write-doc`; do not edit) -->';
const DOC_END = '<!-- house-figures:end -->';

/** `doc` with the generated section replaced by `table`. */
export function withHouseFigures(doc: string, table: string): string {
  const start = doc.indexOf(DOC_START);
  const end = doc.indexOf(DOC_END);
  if (start === -1 || end === -1) throw new Error(`${DOC} has no ${DOC_START} … ${DOC_END} section.`);
  return `${doc.slice(0, start)}${DOC_START}\n${table}\n${doc.slice(end)}`;
}

const isMain = process.argv[1] !== undefined && import.meta.url === new URL(`file://${process.argv[1]}`).href;
if (isMain) {
  const options = {
    root: { type: 'string' },
    dir: { type: 'string' },
    json: { type: 'boolean' },
    shape: { type: 'boolean' },
    figures: { type: 'boolean' },
    'write-doc': { type: 'boolean' },
  } as const;
  const { values } = parseArgs({ options });
  const root = values.root ?? process.cwd();
  if (values.shape === true) {
    const shapes = measure(root, values.dir ?? 'src');
    process.stdout.write(`${values.json === true ? JSON.stringify(shapes, null, 2) : formatShape(shapes)}\n`);
  } else if (values.figures === true) {
    process.stdout.write(`${JSON.stringify(houseFigures(root), null, 2)}\n`);
  } else {
    const before = JSON.parse(readFileSync(join(process.cwd(), BEFORE_FILE), 'utf8')) as HouseFigures;
    const table = formatComparison(before, houseFigures(root));
    process.stdout.write(`${table}\n`);
    if (values['write-doc'] === true) {
      const path = join(process.cwd(), DOC);
      writeFileSync(path, withHouseFigures(readFileSync(path, 'utf8'), table));
      process.stdout.write(`Wrote the figures into ${relative(process.cwd(), path)}.\n`);
    }
  }
}
