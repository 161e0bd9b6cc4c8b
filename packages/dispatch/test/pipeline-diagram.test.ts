// The pipeline diagram in docs/reference/dispatcher.md is checked against the code: its stages name the functions
// pipeline.ts calls, in the order it calls them, and every decision source it shows is one the
// decision-record table documents and the dispatcher really emits.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const read = (path: string): string => readFileSync(new URL(path, import.meta.url), 'utf8');
const docs = read('../../../docs/reference/dispatcher.md');
const pipeline = read('../src/pipeline.ts');
const diagram = /<!-- pipeline diagram[^>]*-->\n```\n([\s\S]*?)```/.exec(docs)?.[1] ?? '';

describe('the pipeline diagram in docs/reference/dispatcher.md', () => {
  it('names the stages 1 to 9, each with the function pipeline.ts calls for it, in call order', () => {
    const stages = [...diagram.matchAll(/^ (\d) {2}(\w+)/gm)].map(([, n, name]) => [Number(n), name as string] as const);
    expect(stages.map(([n]) => n)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    let at = 0;
    for (const [n, name] of stages) {
      const found = pipeline.indexOf(`${name}(`, at);
      expect(found, `stage ${n} '${name}' is called in pipeline.ts after the stage before it`).toBeGreaterThanOrEqual(0);
      at = found;
    }
  });

  it('shows the approved path the code takes: classifyApproved checks denialNow and runs no hooks', () => {
    expect(diagram).toMatch(/executeApproved: 1 to 3 again, no hooks, then denialNow/);
    // classifyApproved and approvedVerdict, which it hands the validated input to.
    const body = (name: string): string => new RegExp(`function ${name}\\([\\s\\S]*?\\n}\\n`).exec(pipeline)?.[0] ?? '';
    const approved = body('classifyApproved') + body('approvedVerdict');
    expect(body('classifyApproved')).toContain('approvedVerdict(');
    expect(approved).toContain('denialNow(');
    expect(approved).not.toContain('runBeforeHooks(');
    expect(approved).not.toContain('gatherFacts(');
  });

  it('every source it shows is in the decision-record table', () => {
    const table = docs.slice(docs.indexOf('| source | decision | when |'));
    const sources = [...diagram.matchAll(/deny {2}([\w:<>*-]+)/g)].map(([, source]) => source as string);
    expect(sources.length).toBeGreaterThanOrEqual(7);
    for (const source of sources) expect(table, source).toContain(`\`${source}\``);
  });
});
