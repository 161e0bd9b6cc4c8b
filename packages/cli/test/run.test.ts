import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { builtFixture, example, turnkit, turnkitOnTty } from './run-cli.js';
import { testLog } from '../../../test-log.ts';

const tempDir = (): Promise<string> => mkdtemp(join(tmpdir(), 'turnkit-cli-'));
/**
 * The examples' plain-Node builds, for the tests of what `run` prints with a flag (--stream, --json,
 * --trace); the first run of each example loads it as shipped, TypeScript through tsx.
 */
const built = (name: string): string => builtFixture(example(name));

// Each test runs its own processes, in a folder of its own when it writes files: they run at the same time.
describe.concurrent('turnkit run', () => {
  it('runs the trip planner: parallel tool calls, results, the final answer and the totals', async () => {
    const run = await turnkit(['run', example('trip-planner.ts')]);
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
    for (const call of ['get_weather call_1', 'search_flights call_2', 'search_flights call_3', 'search_hotels call_4']) {
      expect(run.stdout).toContain(`→ ${call}`);
      expect(run.stdout).toMatch(new RegExp(`✓ ${call} · \\d+ ms →`));
    }
    expect(run.stdout).toContain('4 calls run in parallel');
    expect(run.stdout).toContain('{"flightsEur":186,"hotelEur":256,"totalEur":442}');
    expect(run.stdout).toContain('- Total: 442 € (flights 186 €, hotel 256 € for 2 nights).');
    expect(run.stdout).toMatch(/✔ stopped: completed · 3 model calls · 5 tool calls · 2549 tokens \(2327 in, 222 out\)/);
    // Not a TTY: no colour codes.
    expect(run.stdout).not.toContain('\u001b[');
  });

  it('gives the same turn under --stream, with the streamed answer text', async () => {
    const run = await turnkit(['run', built('trip-planner.ts'), '--stream']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('4 calls run in parallel');
    expect(run.stdout).toContain('- Total: 442 € (flights 186 €, hotel 256 € for 2 nights).');
    expect(run.stdout).toContain('✔ stopped: completed · 3 model calls · 5 tool calls');
    // Each call's header comes before its streamed text, and its totals after.
    const lines = run.stdout.split('\n');
    const header = lines.indexOf('model  call 1');
    const text = lines.indexOf('       I will check the weather, flights both ways and hotels at once.');
    expect(header).toBeGreaterThan(-1);
    expect(text).toBe(header + 1);
    expect(lines[text + 1]).toMatch(/^ {7}4 tool calls · 412 in \/ 96 out tokens · \d+ ms$/);
  });

  it('shows the repair of a structured output and prints the parsed result', async () => {
    const run = await turnkit(['run', example('extract-invoice.ts')]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(
      'rejected, asking the model to repair it: Your final answer does not match the expected shape: at total',
    );
    expect(run.stdout).toContain('the final answer matches the output schema');
    expect(run.stdout).toContain('"total": 642.5');
    expect(run.stdout).toContain('✔ stopped: completed · 3 model calls · 1 tool call');
  });

  it('runs a .json scenario whose tools are declared with JSON Schema', async () => {
    const run = await turnkit(['run', example('order-status.json')]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('✓ get_order call_1');
    expect(run.stdout).toContain('"event":"out for delivery"');
    expect(run.stdout).toContain('it should arrive today, 12 June.');
  });

  it('validates a JSON tool input against its JSON Schema and reports the failure to the model', async () => {
    const dir = await tempDir();
    const file = join(dir, 'bad-call.json');
    const scenario = {
      input: 'Look up order 7.',
      tools: [
        {
          name: 'get_order',
          input: { type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'] },
          result: { ok: true },
        },
      ],
      model: [{ calls: [{ name: 'get_order', input: { orderId: 7 } }] }, { text: 'That id was not valid.' }],
    };
    await writeFile(file, JSON.stringify(scenario));
    const run = await turnkit(['run', file]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/✗ get_order call_1 → .*orderId/);
    expect(run.stdout).toContain('That id was not valid.');
  });

  it('shows a limit notice and the forced final call when maxIterations is reached', async () => {
    const dir = await tempDir();
    const file = join(dir, 'limit.json');
    const scenario = {
      input: 'ping twice',
      limits: { maxIterations: 1 },
      tools: [{ name: 'ping', result: 'pong', readOnly: true }],
      model: [{ calls: [{ name: 'ping' }] }, { text: 'pong, once' }],
    };
    await writeFile(file, JSON.stringify(scenario));
    const run = await turnkit(['run', file]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('limit  max iterations reached after 1 tool round: asking for a final answer with tools off');
    expect(run.stdout).toContain('call 2 (final answer, tools off) · answer');
    expect(run.stdout).toContain('✔ stopped: max_iterations · 2 model calls · 1 tool call');
  });

  it('prints the trace as NDJSON with --json: every line parses, initial first and result last', async () => {
    const run = await turnkit(['run', built('trip-planner.ts'), '--json']);
    expect(run.code).toBe(0);
    const lines = run.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as { kind: string; index?: number; status?: string; output?: unknown });
    expect(lines[0]?.kind).toBe('initial');
    const steps = lines.filter((l) => l.kind === 'step');
    expect(steps.map((s) => s.index)).toEqual(steps.map((_, i) => i));
    expect(steps.length).toBeGreaterThan(5);
    const last = lines.at(-1);
    expect(last?.kind).toBe('result');
    expect(last?.status).toBe('stopped');
    expect(String(last?.output)).toContain('Total: 442 €');
  });

  it('saves a trace that `replay` finds identical, and finds a tampered one different (exit 1)', async () => {
    const dir = await tempDir();
    const trace = join(dir, 'trace.json');
    const run = await turnkit(['run', built('trip-planner.ts'), '--trace', trace]);
    expect(run.code).toBe(0);
    const same = await turnkit(['replay', trace]);
    expect(same.code).toBe(0);
    expect(same.stdout).toMatch(/✔ identical: replayed \d+ steps/);

    const saved = JSON.parse(await readFile(trace, 'utf8')) as { entries: { state: { round: number } }[] };
    saved.entries[4]!.state.round = 99;
    const tampered = join(dir, 'tampered.json');
    await writeFile(tampered, JSON.stringify(saved));
    const diff = await turnkit(['replay', tampered]);
    expect(diff.code).toBe(1);
    expect(diff.stdout).toContain('✖ different: Replay differs at entry 4');
    expect(diff.stdout).toContain('at round: recorded 99');
  });

  it('--stream --json writes NDJSON only, which `replay` finds identical', async () => {
    const dir = await tempDir();
    const run = await turnkit(['run', built('trip-planner.ts'), '--stream', '--json']);
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
    const lines = run.stdout.trimEnd().split('\n');
    for (const line of lines) expect(() => JSON.parse(line) as unknown, line).not.toThrow();
    expect(JSON.parse(lines.at(-1)!)).toMatchObject({ kind: 'result', status: 'stopped' });
    const file = join(dir, 'trace.ndjson');
    await writeFile(file, run.stdout);
    const same = await turnkit(['replay', file]);
    expect(same.stdout).toMatch(/^✔ identical: replayed \d+ steps/);
    expect(same.code).toBe(0);
  });

  it('replays the NDJSON of --json too', async () => {
    const dir = await tempDir();
    const run = await turnkit(['run', built('extract-invoice.ts'), '--json']);
    const file = join(dir, 'trace.ndjson');
    await writeFile(file, run.stdout);
    const same = await turnkit(['replay', file]);
    expect(same.code).toBe(0);
    expect(same.stdout).toContain('✔ identical');
  });
});

// These drive the real binary on a pseudo-terminal through util-linux `script` (part of every
// Debian/Ubuntu base system). Where it is missing they cannot run at all, so they say so and are
// skipped; the prompt logic itself is covered without a terminal in approve.test.ts.
const hasScript = spawnSync('script', ['--version'], { stdio: 'ignore' }).status === 0;
if (!hasScript) testLog('approvals on a terminal: skipped, util-linux `script` is not on PATH (needed for a pseudo-terminal)');

describe.skipIf(!hasScript)('approvals on a terminal', () => {
  const PROMPT = 'allow it?';
  /** Types `keys` once for each approval prompt that appears. */
  const atEachPrompt = (keys: string): ((output: string) => string | null) => {
    let answered = 0;
    return (output) => {
      if (output.split(PROMPT).length - 1 <= answered) return null;
      answered += 1;
      return keys;
    };
  };

  it('Enter at each prompt approves the call and the turn finishes (exit 0)', async () => {
    const run = await turnkitOnTty(['run', example('delete-files.ts')], atEachPrompt('\r'));
    expect(run.stdout).toContain('✓ delete_file call_2');
    expect(run.stdout).toContain('✓ delete_file call_3');
    expect(run.stdout).toContain('✔ stopped: completed');
    expect(run.code).toBe(0);
  });

  it('Ctrl+C at the prompt cancels the turn: no more model calls, cancelled, exit 1', async () => {
    const run = await turnkitOnTty(['run', example('delete-files.ts')], atEachPrompt('\u0003'));
    expect(run.stdout).toContain('✖ cancelled interrupted with Ctrl+C at the approval prompt');
    expect(run.stdout).toMatch(/✗ delete_file call_2 → "cancelled: /);
    expect(run.stdout).not.toContain('approve callback failed');
    expect(run.stdout).not.toContain('model  call 3');
    expect(run.code).toBe(1);
  });

  it('stdin closing at the prompt cancels the turn too (exit 1)', async () => {
    const run = await turnkitOnTty(['run', example('delete-files.ts')], atEachPrompt('EOF'));
    expect(run.stdout).toContain('✖ cancelled the approval prompt was closed (stdin ended) before a decision');
    expect(run.stdout).not.toContain('model  call 3');
    expect(run.code).toBe(1);
  });
});

describe('approvals without a terminal', () => {
  async function suspend(): Promise<{ dir: string; file: string; stdout: string; code: number }> {
    const dir = await tempDir();
    const run = await turnkit(['run', example('delete-files.ts')], { cwd: dir });
    const match = /turnkit resume (\.\/turnkit-suspended-turn-[0-9a-f]+\.json) --approve call_2 --approve call_3/.exec(
      run.stdout,
    );
    return { dir, file: match?.[1] ?? '', stdout: run.stdout, code: run.code };
  }

  it('suspends, saves the turn to the default file and prints how to resume (exit 3)', async () => {
    const { dir, file, stdout, code } = await suspend();
    expect(code).toBe(3);
    expect(file).not.toBe('');
    expect(stdout).toContain('⏸ delete_file call_2 {"path":"tmp/build.log"} waits for approval');
    expect(stdout).toContain(
      `turnkit resume ${file} --reject call_2='reason for the model' --reject call_3='reason for the model'`,
    );
    expect(await readdir(dir)).toEqual([file.slice(2)]);
    const saved = JSON.parse(await readFile(join(dir, file), 'utf8')) as {
      kind: string;
      pending: { call: { id: string } }[];
      scenario: string;
    };
    expect(saved.kind).toBe('turnkit-suspended-turn');
    expect(saved.pending.map((p) => p.call.id)).toEqual(['call_2', 'call_3']);
    expect(saved.scenario).toBe(example('delete-files.ts'));
  });

  it('resume --approve runs the approved calls and finishes; the file cannot be resumed twice', async () => {
    const { dir, file } = await suspend();
    const resumed = await turnkit(['resume', file, '--approve', 'call_2', '--approve', 'call_3'], { cwd: dir });
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toContain('✓ delete_file call_2');
    expect(resumed.stdout).toContain('- Deleted tmp/build.log\n');
    expect(resumed.stdout).toContain('- Deleted tmp/cache.bin\n');
    // Model calls go on from the suspended turn's count (the script continues with its third step).
    expect(resumed.stdout).toContain('call 3 · answer');
    expect(resumed.stdout).toContain('✔ stopped: completed · 3 model calls');
    const again = await turnkit(['resume', file, '--approve', 'call_2'], { cwd: dir });
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('was already resumed');
  });

  it('resume --reject gives rejected results with the reason, and the turn ends without deleting', async () => {
    const { dir, file } = await suspend();
    const resumed = await turnkit(['resume', file, '--reject', 'call_2=keep the log', '--reject', 'call_3'], { cwd: dir });
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toContain('resume call_2 rejected (keep the log)');
    expect(resumed.stdout).toMatch(/✗ delete_file call_2 → "rejected: keep the log/);
    expect(resumed.stdout).toContain('- Not deleted (rejected: keep the log');
    expect(resumed.stdout).not.toContain('- Deleted');
  });

  it('a decision for only some calls suspends again, naming the call still pending', async () => {
    const { dir, file } = await suspend();
    const partial = await turnkit(['resume', file, '--approve', 'call_2'], { cwd: dir });
    expect(partial.code).toBe(3);
    expect(partial.stdout).toContain(`turnkit resume ${file} --approve call_3`);
    const rest = await turnkit(['resume', file, '--reject', 'call_3=not now'], { cwd: dir });
    expect(rest.code).toBe(0);
    expect(rest.stdout).toContain('- Deleted tmp/build.log');
    expect(rest.stdout).toContain('- Not deleted (rejected: not now');
  });

  it('--save chooses the file, and --json keeps stdout NDJSON with the resume hint on stderr', async () => {
    const dir = await tempDir();
    const file = join(dir, 'turn.json');
    const run = await turnkit(['run', example('delete-files.ts'), '--json', '--save', file]);
    expect(run.code).toBe(3);
    const last = JSON.parse(run.stdout.trimEnd().split('\n').at(-1)!) as { kind: string; status: string; savedTo: string };
    expect(last).toMatchObject({ kind: 'result', status: 'suspended', savedTo: file });
    expect(run.stderr).toContain(`turnkit resume ${file} --approve call_2 --approve call_3`);
  });

  it('rejects a decision for an id that is not pending, and a resume without decisions (exit 2)', async () => {
    const { dir, file } = await suspend();
    const unknown = await turnkit(['resume', file, '--approve', 'call_9'], { cwd: dir });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toBe("turnkit: 'call_9' is not a pending call of this turn; the pending calls are call_2, call_3.\n");
    const none = await turnkit(['resume', file], { cwd: dir });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('Give a decision for the pending calls (call_2, call_3)');
  });
});
