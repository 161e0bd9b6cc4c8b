// Small readers for the docs' markdown, used by the tests that keep docs/ true to the code.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The repository root. */
export const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));

export const readDoc = (path: string): string => readFileSync(`${repoRoot}${path}`, 'utf8');

/** The text without fenced code blocks (links and tables inside them are examples, not content). */
export function withoutCode(markdown: string): string {
  return markdown.replace(/^```[\s\S]*?^```/gm, '');
}

/** The section under a heading (any level), up to the next heading of the same or a higher level. */
export function section(markdown: string, heading: string): string {
  const lines = withoutCode(markdown).split('\n');
  const start = lines.findIndex((line) => /^#+ /.test(line) && line.replace(/^#+ /, '') === heading);
  if (start === -1) throw new Error(`no heading "${heading}"`);
  const level = (lines[start] as string).indexOf(' ');
  const end = lines.findIndex((line, i) => i > start && /^#+ /.test(line) && line.indexOf(' ') <= level);
  return lines.slice(start + 1, end === -1 ? undefined : end).join('\n');
}

/** The rows of the first table in `text`, as cells (header and separator left out; `\|` kept as `|`). */
export function tableRows(text: string): string[][] {
  const all = text.split('\n');
  const start = all.findIndex((line) => line.startsWith('|'));
  if (start === -1) return [];
  const end = all.findIndex((line, i) => i > start && !line.startsWith('|'));
  return all.slice(start + 2, end === -1 ? undefined : end).map((line) =>
    line
      .slice(1, line.endsWith('|') ? -1 : undefined)
      .split(/(?<!\\)\|/)
      .map((cell) => cell.trim().replaceAll('\\|', '|')),
  );
}

/** The names in code font in a cell: "`start` or `cancel`" gives ['start', 'cancel']. */
export function codeNames(cell: string): string[] {
  return [...cell.matchAll(/`([^`]+)`/g)].map((match) => match[1] as string);
}

/** The anchor GitHub makes for a heading. */
export function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}
