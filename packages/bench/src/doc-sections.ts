// Sections of docs/benchmarks.md that one command writes and the others keep: each lies between a
// start and an end marker (HTML comments), and a missing one goes before "## Reproduce".
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from './paths.js';

export interface Markers {
  readonly start: string;
  readonly end: string;
}

export const benchmarksDoc = (): string => join(packageRoot, '..', '..', 'docs', 'benchmarks.md');

/** The section currently in docs/benchmarks.md, markers included, or '' when it has none. */
export function currentSection(markers: Markers): string {
  const path = benchmarksDoc();
  if (!existsSync(path)) return '';
  const doc = readFileSync(path, 'utf8');
  const start = doc.indexOf(markers.start);
  const end = doc.indexOf(markers.end);
  return start === -1 || end < start ? '' : doc.slice(start, end + markers.end.length);
}

/** `page` with `section` in place of its section, or before "## Reproduce" when it has none ('' changes nothing). */
export function withSection(page: string, section: string, markers: Markers): string {
  if (section === '') return page;
  const start = page.indexOf(markers.start);
  const end = page.indexOf(markers.end);
  if (start !== -1 && end > start) return `${page.slice(0, start)}${section}${page.slice(end + markers.end.length)}`;
  return page.replace('## Reproduce', `${section}\n\n## Reproduce`);
}

/** Writes `section` into docs/benchmarks.md (the rest of the page stays); returns the path. */
export function writeSection(section: string, markers: Markers): string {
  const path = benchmarksDoc();
  writeFileSync(path, withSection(readFileSync(path, 'utf8'), section, markers));
  return path;
}
