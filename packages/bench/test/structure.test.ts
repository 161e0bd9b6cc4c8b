import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { formatShape, functionSizes, measure } from '../src/structure.ts';

const root = fileURLToPath(new URL('../../..', import.meta.url));

describe('pnpm structure', () => {
  it('measures every function-like node by the lines it spans, nested ones too', () => {
    const text = ['function outer() {', '  const inner = () => {', '    return 1;', '  };', '  return inner();', '}', ''].join(
      '\n',
    );
    expect(functionSizes('a.ts', text)).toEqual([
      { file: 'a.ts', name: 'outer', line: 1, lines: 6 },
      { file: 'a.ts', name: 'inner', line: 2, lines: 3 },
    ]);
  });

  it('reports each package with its largest function and its files over 400 lines', () => {
    const shapes = measure(root);
    const core = shapes.find((s) => s.name === 'core');
    expect(core?.longFiles.map((f) => f.file)).toContain('packages/core/src/turn.ts');
    expect(core?.largest?.lines).toBeGreaterThan(1);
    const table = formatShape(shapes);
    expect(table).toMatch(/^\| package \| files \| lines \|/);
    expect(table).toContain('| core |');
  });
});
