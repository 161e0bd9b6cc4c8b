// The docs stand on their own: nothing in them, in the package READMEs or in the sources points at
// a file outside the repository, a section of an outside document or an issue tracker, and every
// relative link in docs/ (the guides, the reference pages and the generated API reference in
// docs/reference/api/), README.md and the package READMEs leads to a file (and heading, or
// `<a id>` anchor) that exists.
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
const markdown = [
  join(repoRoot, 'README.md'),
  ...filesUnder(join(repoRoot, 'docs'), (p) => p.endsWith('.md')),
  ...packages.map((p) => join(p, 'README.md')).filter((p) => existsSync(p)),
];
const checked = [...markdown, ...packages.flatMap((p) => filesUnder(join(p, 'src'), () => true))].map((path) =>
  relative(repoRoot, path),
);

const anchorCache = new Map<string, ReadonlySet<string>>();

/**
 * The anchors of a page: its headings as GitHub makes them (a repeated heading gets `-1`, `-2`, …)
 * and the `<a id="…">` the API reference writes for each property.
 */
function anchorsOf(file: string): ReadonlySet<string> {
  const cached = anchorCache.get(file);
  if (cached !== undefined) return cached;
  const text = withoutCode(readDoc(file));
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!/^#+ /.test(line)) continue;
    const base = slug(line.replace(/^#+ /, ''));
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  for (const [, id] of text.matchAll(/<a (?:id|name)="([^"]+)"/g)) if (id !== undefined) anchors.add(id);
  anchorCache.set(file, anchors);
  return anchors;
}

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

  it('every relative link in docs/, README.md and the package READMEs leads to a file, and its #anchor to a heading', () => {
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
          if (!anchorsOf(relative(repoRoot, dest)).has(anchor)) broken.push(`${file}: ${target} (no heading #${anchor})`);
        }
      }
    }
    expect(broken).toEqual([]);
  });
});
