import { stripVTControlCharacters } from 'node:util';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { StepFunction } from '@turnkit/check';
import { step } from '@turnkit/core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { PROTOCOL_MUTANTS, STORE_CHECK_MARKERS, STORE_CHECKS } from '@turnkit/check/internal';
import { checkCommand } from '../src/commands/check.ts';
import { checkAgentCommand } from '../src/commands/check-agent.ts';
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

/** What the command writes to stdout, without colour (picocolors colours it when CI is set). */
function captureStdout(): () => string {
  let out = '';
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    out += String(chunk);
    return true;
  });
  return () => stripVTControlCharacters(out);
}

describe('checkCommand', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('prints with its defaults what docs/reference/cli.md shows (all but the time)', async () => {
    const doc = readFileSync(new URL('../../../docs/reference/cli.md', import.meta.url), 'utf8');
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
    expect(out).toMatch(/^ {6}path: w0 claims t1 → .+ unfenced( with the start of t1\/\w+)?$/m);
    expect(out).toContain('✖ the check failed');
  });
});

describe('checkAgentCommand (turnkit check --agent)', () => {
  const fixture = (name: string): string => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));
  let dir = '';
  afterEach(() => {
    vi.restoreAllMocks();
    if (dir !== '') rmSync(dir, { recursive: true, force: true });
    dir = '';
  });

  it('finds the planted mistake, prints its path and writes the counterexample test', async () => {
    dir = mkdtempSync(join(tmpdir(), 'turnkit-check-agent-'));
    const out = join(dir, 'files.counterexample.test.ts');
    const output = captureStdout();
    const code = await checkAgentCommand({ agent: fixture('planted-files-agent.ts'), out, depth: 60, callsPerReply: 1 });
    const text = output().replace(/\u001b\[[0-9;]*m/g, '');
    expect(code).toBe(1);
    expect(text).toMatch(/^✖ delete_file never runs without a person's approval: call-1 ran delete_file/m);
    expect(text).toContain(
      '    path: start → reply: delete_file({"path":"/home/me/"}) → dispatch: call-1 runs (rule:allow:*:path=/home/me/*) ok',
    );
    expect(text).toContain(`wrote ${out}`);
    const written = readFileSync(out, 'utf8');
    expect(written).toContain(
      `import * as agentModule from ${JSON.stringify(relative(dir, fixture('planted-files-agent.ts')))};`,
    );
    expect(written).toContain('expect(checkAgentTrace(agent, records, properties)).toEqual([]);');
  });

  it('returns 0 for the agent as it should be', async () => {
    const output = captureStdout();
    const code = await checkAgentCommand({
      agent: fileURLToPath(new URL('../../check/examples/files-agent.ts', import.meta.url)),
      depth: 60,
      callsPerReply: 1,
    });
    expect(code).toBe(0);
    expect(output()).toContain('every property held');
  });

  it('says what cut a check off and what to do: --max-states, or --depth', async () => {
    const agent = fileURLToPath(new URL('../../check/examples/files-agent.ts', import.meta.url));
    const byStates = captureStdout();
    expect(await checkAgentCommand({ agent, depth: 60, callsPerReply: 1, maxStates: 100 })).toBe(0);
    expect(byStates()).toMatch(
      /^depth {8}\d+ \(cut off at 1\d\d states, --max-states: the turns of these limits are more than that; check with a smaller limits\.maxIterations, or raise --max-states\)$/m,
    );
    vi.restoreAllMocks();
    const byDepth = captureStdout();
    expect(await checkAgentCommand({ agent, depth: 3, callsPerReply: 1 })).toBe(0);
    expect(byDepth()).toMatch(/^depth {8}3 \(cut off at --depth 3: raise it to explore everything\)$/m);
  });

  it('a scenario file is an agent too (as turnkit worker --agents reads one)', async () => {
    const output = captureStdout();
    const code = await checkAgentCommand({ agent: fixture('add.ts'), depth: 60, callsPerReply: 1 });
    expect(code).toBe(0);
    expect(output()).toMatch(/^ {2}add \{"a":0,"b":0\} \(base\)$/m);
  });

  it('a missing file, a file without an agent and bad properties are usage errors', async () => {
    dir = mkdtempSync(join(tmpdir(), 'turnkit-check-agent-'));
    const write = (name: string, text: string): string => {
      writeFileSync(join(dir, name), text);
      return join(dir, name);
    };
    const run = (agent: string) => checkAgentCommand({ agent, depth: 60, callsPerReply: 1 });
    await expect(run(join(dir, 'missing.ts'))).rejects.toThrow(/does not exist/);
    await expect(run(write('nothing.mts', 'export const answer = 42;\n'))).rejects.toThrow(/exports no agent: export `agents`/);
    await expect(run(write('two.mts', 'export const agents = { a: { tools: [] }, b: { tools: [] } };\n'))).rejects.toThrow(
      /exports 2 agents \(a, b\): name one\. Pass --name NAME\./,
    );
    await expect(
      run(write('props.mts', 'export const agents = { a: { tools: [] } };\nexport const properties = [42];\n')),
    ).rejects.toThrow(/`properties` must be an array of properties/);
  });
});
