// The install lines a user reads: every `npm i …` / `npm install …` that names a @turnkit package in
// the README, docs/*.md, docs/reference/*.md and the package READMEs, in code blocks (a line of its own, or after `//` in
// a sample) and in inline code (which may wrap in the prose). The README's come first, then the
// docs' and the package READMEs', each line once, in reading order.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface InstallLine {
  /** The command as written, one space between words (`npm i @turnkit/core zod`). */
  readonly line: string;
  /** Where it is first written, relative to the repository. */
  readonly file: string;
}

/** A word of an install command: a flag or a package name with an optional version. */
const WORD = /^(?:-[DgSE]|--save-dev|--global|(?:@[a-z0-9][\w.-]*\/)?[a-z0-9][\w.-]*(?:@[\w.^~<>=*-]+)?)$/;

/** The words of `text` from `npm` on, up to the first word that is not part of the command. */
function command(text: string): string | undefined {
  const words = text.trim().split(/\s+/);
  if (words[0] !== 'npm' || (words[1] !== 'i' && words[1] !== 'install')) return undefined;
  const rest: string[] = [];
  for (const word of words.slice(2)) {
    if (!WORD.test(word)) break;
    rest.push(word);
  }
  return rest.some((word) => word.startsWith('@turnkit/')) ? ['npm', 'i', ...rest].join(' ') : undefined;
}

/** The install lines of one Markdown text, in order. */
export function linesOf(markdown: string): string[] {
  const found: { at: number; line: string }[] = [];
  let inBlock = false;
  let at = 0;
  for (const raw of markdown.split('\n')) {
    if (/^\s*```/.test(raw)) inBlock = !inBlock;
    else if (inBlock) {
      const line = command(raw.replace(/^\s*(?:\/\/|#|\$)?\s*/, ''));
      if (line !== undefined) found.push({ at, line });
    }
    at += raw.length + 1;
  }
  // Inline code outside the blocks: `npm i …`, possibly wrapped onto the next line.
  const prose = markdown.replace(/```[\s\S]*?```/g, (block) => ' '.repeat(block.length));
  for (const match of prose.matchAll(/`(npm (?:i|install) [^`]+)`/g)) {
    const line = command(match[1] ?? '');
    if (line !== undefined) found.push({ at: match.index, line });
  }
  return found.sort((a, b) => a.at - b.at).map(({ line }) => line);
}

/** The Markdown files of one folder (not its subfolders), sorted, relative to the repository. */
function markdownIn(repo: string, dir: string): string[] {
  return readdirSync(join(repo, dir))
    .filter((file) => file.endsWith('.md'))
    .sort()
    .map((file) => `${dir}/${file}`);
}

/** Every install line of the repository's Markdown, the README's first, each once. */
export function installLines(repo: string): InstallLine[] {
  const files = [
    'README.md',
    ...markdownIn(repo, 'docs'),
    // The hand-written reference pages (the generated API reference has no install lines).
    ...markdownIn(repo, 'docs/reference'),
    ...readdirSync(join(repo, 'packages'))
      .sort()
      .map((name) => `packages/${name}/README.md`)
      .filter((file) => existsSync(join(repo, file))),
  ];
  const seen = new Map<string, string>();
  for (const file of files)
    for (const line of linesOf(readFileSync(join(repo, file), 'utf8'))) if (!seen.has(line)) seen.set(line, file);
  return [...seen].map(([line, file]) => ({ line, file }));
}
