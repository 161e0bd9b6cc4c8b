// The shape of the sources: for each package's src/, its largest function and the files over the
// line limit. Functions are measured by the lines they span (a nested function counts inside its
// parent too), so the largest one is what a reader has to hold on one screen.
//
//   pnpm structure                   the table for this checkout
//   pnpm structure --root <dir>      the same for another checkout (a copy of an older commit, say)
//   pnpm structure --dir test        the tests instead of the sources
//   pnpm structure --json            the figures as JSON
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseArgs } from 'node:util';
import ts from 'typescript';

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

const isMain = process.argv[1] !== undefined && import.meta.url === new URL(`file://${process.argv[1]}`).href;
if (isMain) {
  const options = { root: { type: 'string' }, dir: { type: 'string' }, json: { type: 'boolean' } } as const;
  const { values } = parseArgs({ options });
  const shapes = measure(values.root ?? process.cwd(), values.dir ?? 'src');
  process.stdout.write(`${values.json === true ? JSON.stringify(shapes, null, 2) : formatShape(shapes)}\n`);
}
