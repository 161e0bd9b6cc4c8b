// `turnkit run FILE --agent NAME`, in-process (the CLI's `main`, as the binary calls it): the
// commands docs/cli.md shows, a suspended agent's turn resumed from its file, the refusals, and a
// stored run of a named agent.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stripVTControlCharacters } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { main } from '../src/program.js';

const read = (path: string): Promise<string> => readFile(new URL(path, import.meta.url), 'utf8');
const REFUNDS = fileURLToPath(new URL('./fixtures/refund-agents.ts', import.meta.url));
const OBSERVE_THROWS = fileURLToPath(new URL('./fixtures/observe-throws.ts', import.meta.url));
const REPO = fileURLToPath(new URL('../../../', import.meta.url));

/** Runs `turnkit ...args` in this process; what it printed (stdout then stderr, no colour) and its exit code. */
async function turnkit(...args: string[]): Promise<{ code: number; out: string }> {
  let out = '';
  const capture = (chunk: string | Uint8Array): boolean => {
    out += String(chunk);
    return true;
  };
  const stdout = vi.spyOn(process.stdout, 'write').mockImplementation(capture);
  const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(capture);
  try {
    const code = await main(['node', 'turnkit', ...args]);
    return { code, out: stripVTControlCharacters(out) };
  } finally {
    stdout.mockRestore();
    stderr.mockRestore();
  }
}

/** A path of the page (from the repository's root) as this process can open it, whatever its working directory. */
const fromRepo = (arg: string): string => (arg.startsWith('packages/') ? `${REPO}${arg}` : arg);

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'turnkit-run-agent-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});
afterEach(() => vi.restoreAllMocks());

describe('turnkit run FILE --agent NAME', () => {
  it('docs/cli.md shows examples/desk-agents.ts as it is, and its commands print what the page shows', async () => {
    const doc = (await read('../../../docs/cli.md')).split('### One agent of an agents file')[1] ?? '';
    expect(doc).toContain(`\`\`\`ts\n${await read('../examples/desk-agents.ts')}\`\`\``);
    const block = doc.match(/```\n(\$ turnkit[\s\S]*?)```/)?.[1] ?? '';
    const steps = block.split(/^\$ turnkit /m).slice(1);
    expect(steps).toHaveLength(2);
    const codes: number[] = [];
    for (const step of steps) {
      const [line = '', ...shown] = step.split('\n');
      const args = [...line.matchAll(/'([^']*)'|(\S+)/g)].map((m) => fromRepo(m[1] ?? m[2] ?? ''));
      const run = await turnkit(...args);
      codes.push(run.code);
      const ms = / \d+ ms/g;
      expect(run.out.replaceAll(REPO, '').replace(ms, ' N ms'), line).toBe(shown.join('\n').replace(ms, ' N ms'));
    }
    expect(codes).toEqual([0, 2]);
  });

  it('a turn of an agent that parks records the agent; turnkit resume loads the same agent and finishes it', async () => {
    const saved = join(dir, 'refund.json');
    const run = await turnkit('run', REFUNDS, '--agent', 'refunds', '--input', 'Refund invoice 7.', '--save', saved);
    expect(run.code, run.out).toBe(3);
    expect(run.out).toContain('· agent refunds · its model · 1 tool');
    expect(JSON.parse(await readFile(saved, 'utf8'))).toMatchObject({ agent: 'refunds', scenario: REFUNDS });
    const resumed = await turnkit('resume', saved, '--approve', 'call_1');
    expect(resumed.code, resumed.out).toBe(0);
    expect(resumed.out).toContain('✓ refund call_1');
    expect(resumed.out).toContain('Invoice 7 is refunded.');
  });

  it('refuses, naming what to do: an unknown name, no input, approvalTimeoutMs (only a stored turn keeps time), a bad option, --agent on a scenario', async () => {
    const refused = async (...args: string[]): Promise<string> => {
      const run = await turnkit('run', ...args);
      expect(run.code, run.out).toBe(2);
      return run.out.trim();
    };
    expect(await refused(REFUNDS, '--agent', 'nobody', '--input', 'hi')).toBe(
      `turnkit: ${REFUNDS} has no agent 'nobody': its agents are refunds, capped, checked, compacted, observed, timed.`,
    );
    expect(await refused(REFUNDS, '--agent', 'refunds')).toBe(
      `turnkit: Agent 'refunds' of ${REFUNDS} has no input of its own: give the user's message with --input TEXT.`,
    );
    expect(await refused(REFUNDS, '--agent', 'timed', '--input', 'hi')).toBe(
      `turnkit: ${REFUNDS}: agent 'timed' has approvalTimeoutMs, which turnkit run cannot apply in this process: nothing in this process keeps time for a parked call (the prompt and a suspended-turn file wait until the call is decided). Store the turn, where a worker applies it: add --store (or run \`turnkit dev --agents ${REFUNDS}\`), or remove approvalTimeoutMs.`,
    );
    const bad = join(dir, 'bad-agents.mjs');
    await writeFile(
      bad,
      "const model = { generate: async () => ({ text: 'hi', toolCalls: [] }) };\nexport const agents = { zero: { model, maxRunning: 0 }, text: { model, check: 'EUR' } };\n",
    );
    expect(await refused(bad, '--agent', 'zero', '--input', 'hi')).toBe(
      `turnkit: Agent 'zero' of ${bad}: \`maxRunning\` must be a whole number of turns, at least 1.`,
    );
    expect(await refused(bad, '--agent', 'text', '--input', 'hi')).toBe(
      `turnkit: Agent 'text' of ${bad}: \`check\` must be a function.`,
    );
    expect((await refused(fromRepo('packages/cli/examples/trip-planner.ts'), '--agent', 'planner')).replace(REPO, '')).toBe(
      'turnkit: packages/cli/examples/trip-planner.ts exports no `agents`, so --agent planner names none: it is a scenario, one agent; run it without --agent.',
    );
    expect(await refused(fromRepo('packages/cli/examples/order-status.json'), '--agent', 'orders')).toMatch(
      /is a JSON scenario, one agent/,
    );
  });

  it('with --store the named agent runs whole, by a worker, its turn stored under its name', async () => {
    const run = await turnkit('run', REFUNDS, '--agent', 'capped', '--input', 'Read invoices 7 and 8.', '--store', 'memory://');
    expect(run.code, run.out).toBe(0);
    expect(run.out).toMatch(/· agent capped · stopped/);
    expect(run.out).toContain('the tool-call budget is used up (budget.maxCalls = 1)');
    expect(run.out).toContain('assistant: Invoice 7 comes to 120 EUR.');
  });
});

describe('turnkit run FILE --agent NAME applies every option of the agent in this process, as runTurn does', () => {
  const run = (agent: string, ...more: string[]) => turnkit('run', REFUNDS, '--agent', agent, '--input', 'Read them.', ...more);

  it('budget: the dispatcher runs one call and refuses the next, naming the limit (--stream too)', async () => {
    for (const flags of [[], ['--stream']]) {
      const { code, out } = await run('capped', ...flags);
      expect(code, out).toBe(0);
      expect(out).toContain('✓ read_invoice call_1');
      expect(out).toContain(
        `✗ read_invoice call_2 → "Call to 'read_invoice' not run: the tool-call budget is used up (budget.maxCalls = 1).`,
      );
    }
  });

  it('check: a rejected answer goes back to the model, which repairs it; maxRunning caps stored turns and is accepted', async () => {
    const { code, out } = await run('checked');
    expect(code, out).toBe(0);
    expect(out).toContain('check  rejected, asking the model to repair it: give the amount in EUR');
    expect(out).toContain('✔ stopped: completed · 2 model calls');
  });

  it('compact: the model sees what keepLastMessages(2) kept (3 messages of 7)', async () => {
    const { code, out } = await run('compacted');
    expect(code, out).toBe(0);
    expect(out).toContain('round 4 saw 3 messages');
  });

  it("observe: asked once per run with the turn's id, its hooks see effects and tool runs; its trace context goes through the suspended file to the resume", async () => {
    const seen = ((globalThis as { turnkitObserved?: string[] }).turnkitObserved ??= []);
    seen.length = 0;
    const saved = join(dir, 'observed.json');
    const parked = await run('observed', '--save', saved);
    expect(parked.code, parked.out).toBe(3);
    const file = JSON.parse(await readFile(saved, 'utf8')) as { state: { id: string }; traceContext: unknown };
    const id = file.state.id;
    expect(file.traceContext).toEqual({ span: 'after 2' });
    expect(seen).toEqual([`observe observed ${id} null`, 'call_llm', 'end suspended']);
    const resumed = await turnkit('resume', saved, '--approve', 'call_1');
    expect(resumed.code, resumed.out).toBe(0);
    expect(seen.slice(3)).toEqual([`observe observed ${id} {"span":"after 2"}`, 'run refund', 'call_llm', 'end stopped']);
  });

  it('a resume file whose traceContext is over 4 KB of JSON is refused, naming the field, before anything runs', async () => {
    const saved = join(dir, 'observed-big.json');
    expect((await run('observed', '--save', saved)).code).toBe(3);
    const file = JSON.parse(await readFile(saved, 'utf8')) as Record<string, unknown>;
    await writeFile(saved, JSON.stringify({ ...file, traceContext: 'x'.repeat(5000) }));
    const resumed = await turnkit('resume', saved, '--approve', 'call_1');
    expect(resumed.code, resumed.out).toBe(2);
    expect(resumed.out).toContain('at traceContext: must be at most 4096 characters of JSON');
  });

  it('an observer that throws is reported and the turn runs without it', async () => {
    const { code, out } = await turnkit('run', OBSERVE_THROWS, '--input', 'hi');
    expect(code, out).toBe(0);
    expect(out).toContain("! Agent 'observe-throws': observe threw (no observer today); the turn runs without its observer.");
    expect(out).toContain('✔ stopped: completed');
  });
});

describe('turnkit run FILE with agents (docs/agents.md, "From the command line")', () => {
  it('runs examples/supervisor.ts and prints the tree as a timeline, as the page shows; a tree without a name is refused', async () => {
    const run = await turnkit('run', fromRepo('packages/cli/examples/supervisor.ts'));
    expect(run.code, run.out).toBe(0);
    const ms = / \d+ ms/g;
    const printed = run.out.replaceAll(REPO, '').replace(ms, ' N ms');
    const doc = (await read('../../../docs/agents.md')).split('## From the command line\n')[1] ?? '';
    expect(doc).toContain(`\`\`\`ts\n${await read('../examples/supervisor.ts')}\`\`\``);
    const shown = doc.match(/```text\n\$ turnkit run packages\/cli\/examples\/supervisor.ts\n([\s\S]*?)```/)?.[1] ?? '';
    expect(printed).toBe(shown.replace(ms, ' N ms'));
    expect(printed).toContain('researcher │ tool   ✓ search call_1');
    const unnamed = await turnkit('run', fileURLToPath(new URL('./fixtures/unnamed-tree.ts', import.meta.url)));
    expect(unnamed.code, unnamed.out).toBe(2);
    expect(unnamed.out).toContain('a scenario with `delegates`, `handoffs` or `models` needs a `name`');
    // A worker finds a stored tree's agents by name: a tree of objects is refused before anything is stored.
    const stored = await turnkit('run', fromRepo('packages/cli/examples/supervisor.ts'), '--store', 'memory://');
    expect(stored.code, stored.out).toBe(2);
    expect(stored.out).toContain('is a turn of many agents given as objects, which runs in this process only');
    // Each agent of a tree has its own dispatcher: a dispatcher budget is refused, naming what bounds a tree.
    const budgeted = join(dir, 'budgeted-tree.ts');
    const tree = fileURLToPath(new URL('./fixtures/approval-tree.ts', import.meta.url));
    await writeFile(
      budgeted,
      `import { scenario } from ${JSON.stringify(tree)};\nexport default { ...scenario, budget: { maxCalls: 1 } };\n`,
    );
    const refused = await turnkit('run', budgeted);
    expect(refused.code, refused.out).toBe(2);
    expect(refused.out).toContain('`budget` is a dispatcher budget, which a turn of many agents cannot take in this process');
  });

  it("a tree suspended on a child's call is saved with the agent path; turnkit resume decides it and only the child goes on", async () => {
    const tree = fileURLToPath(new URL('./fixtures/approval-tree.ts', import.meta.url));
    // The fixture counts each tool's executions on globalThis (the CLI loads its own copy of the module).
    const runs = ((globalThis as Record<symbol, unknown>)[Symbol.for('turnkit.test.approval-tree.runs')] ??= {
      publish: 0,
      look: 0,
    }) as Record<string, number>;
    const saved = join(dir, 'tree.json');
    const run = await turnkit('run', tree, '--save', saved);
    expect(run.code, run.out).toBe(3);
    expect(run.out).toContain('editor │ tool   ✓ look call_1');
    expect(run.out).toContain('Pending calls of agents of the tree:\n  call_2 publish · agent lead › editor\n');
    expect(runs).toEqual({ look: 1, publish: 0 });
    const file = JSON.parse(await readFile(saved, 'utf8'));
    expect(file.pending).toMatchObject([{ call: { id: 'call_2', name: 'publish' }, agentPath: ['lead', 'editor'] }]);
    expect(Object.keys(file.childTranscripts)).toEqual([`${file.state.id}/call_1`]);
    expect(file.agentModelCalls).toEqual({ editor: 2 });
    const copy = async (name: string, change: (f: typeof file) => unknown = (f) => f): Promise<string> => {
      const path = join(dir, name);
      await writeFile(path, JSON.stringify(change(structuredClone(file))));
      return path;
    };
    const rejectFile = await copy('tree-reject.json');

    // Refused before anything runs: a pending call of another agent path, a child's transcript left out, an id that is not pending.
    const otherPath = await turnkit(
      'resume',
      await copy('tree-path.json', (f) => ({ ...f, pending: [{ ...f.pending[0], agentPath: ['lead'] }] })),
      '--approve',
      'call_2',
    );
    expect(otherPath.code, otherPath.out).toBe(2);
    expect(otherPath.out).toContain('are not the undecided parked calls of its state (call_2 of lead > editor)');
    const noChild = await turnkit(
      'resume',
      await copy('tree-nochild.json', (f) => ({ ...f, childTranscripts: undefined })),
      '--approve',
      'call_2',
    );
    expect(noChild.code, noChild.out).toBe(2);
    expect(noChild.out).toContain('at childTranscripts: it keeps the transcripts of no child turn');
    const inflated = await turnkit(
      'resume',
      await copy('tree-calls.json', (f) => ({ ...f, agentModelCalls: { editor: 9 } })),
      '--approve',
      'call_2',
    );
    expect(inflated.code, inflated.out).toBe(2);
    expect(inflated.out).toContain(
      "at agentModelCalls: its agents' 9 model calls and the scenario model's 1 are more than the 3 its state counts",
    );
    const parentId = await turnkit('resume', saved, '--approve', 'call_1');
    expect(parentId.code, parentId.out).toBe(2);
    expect(parentId.out).toContain("'call_1' is not a pending call of this turn; the pending calls are call_2.");
    expect(runs).toEqual({ look: 1, publish: 0 });

    // Approved: the child's call runs, the child answers, then the parent; nothing ran again.
    const resumed = await turnkit('resume', saved, '--approve', 'call_2');
    expect(resumed.code, resumed.out).toBe(0);
    expect(resumed.out).toContain('resume call_2 approved · agent lead › editor');
    expect(resumed.out).toContain('editor │ tool   ✓ publish call_2 → "published Bridge"');
    expect(resumed.out).toContain('tool   ✓ transfer_task call_1 → "Published."');
    expect(resumed.out).not.toContain('look call_1');
    expect(runs).toEqual({ look: 1, publish: 1 });
    // docs/agents.md shows these lines as printed.
    const page = (await read('../../../docs/agents.md')).split('## From the command line\n')[1] ?? '';
    for (const line of [
      'Pending calls of agents of the tree:\n  call_2 publish · agent lead › editor\n',
      'resume call_2 approved · agent lead › editor\n',
      'editor │ tool   ✓ publish call_2 → "published Bridge"\n',
    ]) {
      expect(page).toContain(line);
      expect(`${run.out}${resumed.out}`).toContain(line);
    }
    // One approval, one execution: the file is spent.
    const again = await turnkit('resume', saved, '--approve', 'call_2');
    expect(again.code, again.out).toBe(2);
    expect(again.out).toContain('was already resumed');

    // Rejected (a copy saved before the decision), streamed: the child hears why, answers, and the parent ends; the tool never runs.
    const rejected = await turnkit('resume', rejectFile, '--reject', 'call_2=not today', '--stream');
    expect(rejected.code, rejected.out).toBe(0);
    expect(rejected.out).toContain('resume call_2 rejected (not today) · agent lead › editor');
    expect(rejected.out).toContain('editor │ tool   ✗ publish call_2');
    expect(runs).toEqual({ look: 1, publish: 1 });
  });
});
