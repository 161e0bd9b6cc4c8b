// docs/model-checking.md shows examples/check-my-limits.ts verbatim; this runs it.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { checkAgent, type CheckedAgent } from '@turnkit/check';
import { checkMyLimits } from '../examples/check-my-limits.js';
import { checkFilesAgent } from '../examples/check-files-agent.ts';
import { agents, properties } from '../examples/files-agent.ts';
import { testLog } from '../../../test-log.ts';

const read = (path: string): string => readFileSync(fileURLToPath(new URL(path, import.meta.url)), 'utf8');

describe('docs/model-checking.md', () => {
  it('shows the example as it is in packages/check/examples/check-my-limits.ts', () => {
    expect(read('../../../docs/model-checking.md')).toContain(read('../examples/check-my-limits.ts'));
  });

  it("the example checks a user's limits", () => {
    const { states, transitions } = checkMyLimits({
      maxIterations: 2,
      loopThreshold: 2,
      maxOutputRepairs: 1,
      loopExemptTools: ['clock'],
      budget: { maxToolCalls: 3 },
    });
    testLog(`example: ${states} states, ${transitions} transitions`);
    expect(states).toBeGreaterThan(50);
  });
});

describe('docs/check-your-agent.md', () => {
  const doc = read('../../../docs/check-your-agent.md');
  const EXAMPLE = read('../examples/files-agent.ts');
  const planted = (): CheckedAgent => ({
    ...agents.files,
    permissions: { deny: ['read_file:path=/etc/*'], allow: ['*:path=/home/me/*'] },
  });
  /** The figure rows of the page's output block that starts with `command`. */
  const shown = (command: string): { states: number; transitions: number; depth: number; violations: number } => {
    const block = doc.split(`$ ${command}\n`)[1]?.split('```')[0] ?? '';
    const row = (name: string): number => Number(new RegExp(`^${name}\\s+(\\d+)`, 'm').exec(block)?.[1]);
    return { states: row('states'), transitions: row('transitions'), depth: row('depth'), violations: row('violations') };
  };

  it('shows the agent as it is in packages/check/examples/files-agent.ts, and the planted rule in it', () => {
    expect(doc).toContain(EXAMPLE);
    expect(EXAMPLE).toContain("allow: ['read_file:path=/home/me/notes/*'],");
    expect(doc).toContain("      allow: ['*:path=/home/me/*'],\n");
  });

  it('the figures of the exhaustive check are those checkAgent gives', async () => {
    const result = await checkAgent(agents.files, { properties });
    expect(result.exhaustive).toBe(true);
    const { states, transitions, depth, violationCount: violations } = result;
    expect(shown('turnkit check --agent files-agent.ts')).toEqual({ states, transitions, depth, violations });
  });

  it('the planted mistake is found and the counterexample test shown is the one written', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'turnkit-check-doc-'));
    try {
      const file = join(dir, 'files.counterexample.test.ts');
      const result = await checkAgent(planted(), {
        properties,
        out: { file, agentImport: './files-agent.ts', writtenBy: 'turnkit check --agent files-agent.ts' },
      });
      const { states, transitions, depth, violationCount: violations } = result;
      expect(shown('turnkit check --agent files-agent.ts --out files.counterexample.test.ts')).toEqual({
        states,
        transitions,
        depth,
        violations,
      });
      const first = result.violations[0]!;
      expect(doc).toContain(`✖ ${first.property}: ${first.message}\n    path: ${first.path.map((s) => s.label).join(' → ')}\n`);
      expect(doc).toContain(`\`\`\`ts\n${readFileSync(file, 'utf8')}\`\`\``);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('shows check-files-agent.ts as it is, and what it returns', async () => {
    expect(doc).toContain(read('../examples/check-files-agent.ts'));
    const dir = mkdtempSync(join(tmpdir(), 'turnkit-check-doc-'));
    try {
      const found = await checkFilesAgent(join(dir, 'files.counterexample.test.ts'));
      expect(found).toHaveLength(1);
      expect(doc).toContain(`It returns \`${JSON.stringify(found)}\`.`);
      expect(readFileSync(join(dir, 'files.counterexample.test.ts'), 'utf8')).toContain(
        '"delete_file never runs after read_file',
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
