// The docs stand on their own: nothing in them, in the package READMEs or in the sources points at
// a file outside the repository, a section of an outside document or an issue tracker, and every
// relative link in docs/ and README.md leads to a file (and heading) that exists.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readDoc, repoRoot, slug, withoutCode } from './markdown.js';

function filesUnder(dir: string, keep: (path: string) => boolean): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'node_modules' || name === 'dist' ? [] : filesUnder(path, keep);
    return keep(path) ? [path] : [];
  });
}

const packages = readdirSync(join(repoRoot, 'packages')).map((name) => join(repoRoot, 'packages', name));
const markdown = [join(repoRoot, 'README.md'), ...filesUnder(join(repoRoot, 'docs'), (p) => p.endsWith('.md'))];
const checked = [
  ...markdown,
  ...packages.map((p) => join(p, 'README.md')).filter((p) => existsSync(p)),
  ...packages.flatMap((p) => filesUnder(join(p, 'src'), () => true)),
].map((path) => relative(repoRoot, path));

const OUTSIDE: ReadonlyArray<[RegExp, string]> = [
  [/shared\//, 'a path into a shared/ folder'],
  [/§/, 'a section sign'],
  [/\bissues? #?\d+/i, 'an issue number'],
];

describe('docs and sources point only inside the repository', () => {
  it('finds the files it checks', () => {
    expect(checked).toContain('docs/turn-contract.md');
    expect(checked).toContain('packages/core/src/turn.ts');
  });

  it('no file mentions shared/, § or an issue number', () => {
    const found: string[] = [];
    for (const file of checked) {
      readDoc(file)
        .split('\n')
        .forEach((line, i) => {
          for (const [pattern, what] of OUTSIDE) if (pattern.test(line)) found.push(`${file}:${i + 1}: ${what}: ${line.trim()}`);
        });
    }
    expect(found).toEqual([]);
  });

  it('every relative link in docs/ and README.md leads to a file, and its #anchor to a heading', () => {
    const broken: string[] = [];
    for (const path of markdown) {
      const file = relative(repoRoot, path);
      const text = withoutCode(readDoc(file)).replace(/`[^`\n]*`/g, '');
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
        if (target === undefined || /^[a-z][a-z+.-]*:/i.test(target)) continue;
        const [pathPart, anchor] = target.split('#') as [string, string | undefined];
        const dest = pathPart === '' ? path : resolve(dirname(path), decodeURIComponent(pathPart));
        if (!existsSync(dest)) {
          broken.push(`${file}: ${target} (no such file)`);
          continue;
        }
        if (anchor !== undefined && dest.endsWith('.md')) {
          const headings = withoutCode(readDoc(relative(repoRoot, dest)))
            .split('\n')
            .filter((line) => /^#+ /.test(line))
            .map((line) => slug(line.replace(/^#+ /, '')));
          if (!headings.includes(anchor)) broken.push(`${file}: ${target} (no heading #${anchor})`);
        }
      }
    }
    expect(broken).toEqual([]);
  });
});
