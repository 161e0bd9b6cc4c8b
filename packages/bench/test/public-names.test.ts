// The names each package shows its users, against the reviewed list in packages/bench/public-names.json.
// Adding or removing a name from a package's root or a subpath in its package.json `exports` fails
// here until the list is updated (`pnpm public-names`) and the change is reviewed in the diff.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { entryPoints, NAMES_FILE, namesPerPackage, publicNames } from '../src/public-names.ts';

const root = fileURLToPath(new URL('../../..', import.meta.url));
const reviewed = JSON.parse(readFileSync(join(root, NAMES_FILE), 'utf8')) as Record<string, string[]>;
const current = publicNames(root);

function difference(a: readonly string[], b: readonly string[]): string[] {
  const other = new Set(b);
  return a.filter((name) => !other.has(name));
}

describe('public names', () => {
  it(`every entry point exports exactly the names reviewed in ${NAMES_FILE}`, () => {
    const changes: string[] = [];
    for (const entry of [...new Set([...Object.keys(reviewed), ...Object.keys(current)])].sort()) {
      const added = difference(current[entry] ?? [], reviewed[entry] ?? []);
      const removed = difference(reviewed[entry] ?? [], current[entry] ?? []);
      if (!(entry in current)) changes.push(`${entry}: the entry point is gone (it was in the list)`);
      else if (!(entry in reviewed)) changes.push(`${entry}: a new entry point exporting ${current[entry]?.join(', ')}`);
      else {
        if (added.length > 0) changes.push(`${entry}: added ${added.join(', ')}`);
        if (removed.length > 0) changes.push(`${entry}: removed ${removed.join(', ')}`);
      }
    }
    expect(
      changes,
      `The public names changed:\n  ${changes.join('\n  ')}\nIf that is meant, run \`pnpm public-names\` to update ${NAMES_FILE} and commit it for review.`,
    ).toEqual([]);
  });

  it('the list is sorted, so its diff shows each added or removed name on a line of its own', () => {
    for (const [entry, names] of Object.entries(reviewed)) expect(names, entry).toEqual([...names].sort());
    expect(Object.keys(reviewed)).toEqual(Object.keys(reviewed).sort());
  });

  it.each(entryPoints(root).map((e) => e.specifier))('%s: every name it has at run time is counted', async (specifier) => {
    const runtime = Object.keys(await import(/* @vite-ignore */ specifier));
    expect(difference(runtime, current[specifier] ?? [])).toEqual([]);
  });

  it('the private bench tool has no library face', () => {
    expect(namesPerPackage(root, current).bench ?? 0).toBe(0);
    expect(entryPoints(root).filter((e) => e.dir === 'bench')).toEqual([]);
  });
});
