import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StepFunction } from '@turnkit/check';
import { step } from '@turnkit/core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { PROTOCOL_MUTANTS, STORE_CHECK_MARKERS, STORE_CHECKS } from '@turnkit/check/store';
import { checkCommand } from '../src/commands/check.ts';
import { checkStoreCommand } from '../src/commands/check-store.ts';

/** A deliberate bug (as in packages/check/test/mutation.test.ts): parked calls run without a decision. */
const executesParked: StepFunction = (state, event) => {
  const [next, effects] = step(state, event);
  if (!(state.status === 'dispatching' && next.status === 'awaiting_approval')) return [next, effects];
  if (next.batch === null) return [next, effects];
  const calls = next.batch.parked.map((p) => p.call);
  const decisions = Object.fromEntries(calls.map((c) => [c.id, { type: 'approve' } as const]));
  return [
    { ...next, status: 'executing_approved', batch: { ...next.batch, decisions } },
    [...effects, { type: 'execute_approved', calls }],
  ];
};

const OPTIONS = { maxIterations: 2, loopThreshold: 2, repairs: 1, depth: 30 };

function captureStdout(): () => string {
  let out = '';
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    out += String(chunk);
    return true;
  });
  return () => out;
}

describe('checkCommand', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('prints with its defaults what docs/cli.md shows (all but the time)', async () => {
    const doc = readFileSync(new URL('../../../docs/cli.md', import.meta.url), 'utf8');
    const shown = doc.split('\n$ turnkit check\n')[1]?.split('```')[0] ?? '';
    const output = captureStdout();
    const code = await checkCommand({ maxIterations: 2, loopThreshold: 2, repairs: 1, depth: 60 });
    const withoutTime = (text: string): string => text.replace(/^time .*$/m, 'time');
    expect(code).toBe(0);
    expect(withoutTime(output())).toBe(withoutTime(shown));
  }, 120_000);

  it('prints the violations of a broken step and returns exit code 1', async () => {
    const output = captureStdout();
    const code = await checkCommand({ ...OPTIONS, step: executesParked });
    const out = output().replace(/\u001b\[[0-9;]*m/g, '');
    expect(code).toBe(1);
    const violations = Number(/^violations\s+(\d+)$/m.exec(out)?.[1]);
    expect(violations).toBeGreaterThan(0);
    expect(out).toMatch(/^✖ invariant 8: .*executed without an approve decision/m);
    expect(out).toMatch(/^ {4}path: .+ → .+/m);
    expect(out).not.toContain('no invariant was violated');
  });

  it('returns 0 for the real step with the same options', async () => {
    const output = captureStdout();
    const code = await checkCommand(OPTIONS);
    expect(code).toBe(0);
    expect(output()).toContain('no invariant was violated');
  });
});

describe('checkStoreCommand (turnkit check --store)', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('prints the figures of every exploration and every mutant caught, and --write replaces the page section', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'turnkit-check-store-'));
    const page = join(dir, 'page.md');
    writeFileSync(page, `# Page\n\nbefore\n\n${STORE_CHECK_MARKERS.start}\nold figures\n${STORE_CHECK_MARKERS.end}\n\nafter\n`);
    try {
      const output = captureStdout();
      const code = await checkStoreCommand({ write: page });
      const out = output().replace(/\u001b\[[0-9;]*m/g, '');
      expect(code).toBe(0);
      for (const spec of STORE_CHECKS) expect(out).toContain(spec.name);
      expect(out.match(/^ {2}states {7}[\d,]+$/gm)).toHaveLength(STORE_CHECKS.length);
      expect(out.match(/^ {2}depth {8}\d+ \(exhaustive\)$/gm)).toHaveLength(STORE_CHECKS.length);
      expect(out.match(/^ {2}✔ caught /gm)).toHaveLength(PROTOCOL_MUTANTS.length);
      expect(out).toContain('✔ no invariant was violated, and every mutant was caught');
      const written = readFileSync(page, 'utf8');
      expect(written.startsWith('# Page\n\nbefore\n\n<!-- store-check:start')).toBe(true);
      expect(written.endsWith('<!-- store-check:end -->\n\nafter\n')).toBe(true);
      expect(written).not.toContain('old figures');
      expect(written).toMatch(/^\| skip the fence check on a write \| [^|]+ \| 4 \| yes \|/m);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses --write to a page without the section, before exploring', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'turnkit-check-store-'));
    const page = join(dir, 'page.md');
    writeFileSync(page, '# No markers here\n');
    try {
      await expect(checkStoreCommand({ write: page })).rejects.toThrow(/has no store-check section/);
      expect(readFileSync(page, 'utf8')).toBe('# No markers here\n');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('prints the violations of a broken protocol with their paths and returns exit code 1', async () => {
    const unfenced = PROTOCOL_MUTANTS.find((m) => m.invariant === 4);
    const first = STORE_CHECKS[0];
    if (unfenced === undefined || first === undefined) throw new Error('missing mutant or check');
    const output = captureStdout();
    // A small world (no death) keeps it quick; the unfenced write needs only a pause.
    const small = { name: 'one turn and a pause', config: { ...first.config, deaths: 0 } };
    const code = await checkStoreCommand({ checks: [small], protocol: unfenced.protocol });
    const out = output().replace(/\u001b\[[0-9;]*m/g, '');
    expect(code).toBe(1);
    expect(out).toMatch(/^ {2}✖ invariant 4: worker w\d wrote turn t1 at token \d, which w\d also wrote at\.$/m);
    expect(out).toMatch(/^ {6}path: w0 claims t1 → .+ unfenced$/m);
    expect(out).toContain('✖ the check failed');
  });
});
