// What a resume file may do, and what a model may print: the built binary, run as a user runs it.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { appendFile, copyFile, mkdtemp, readFile, readdir, symlink, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { builtFixture, REPO, turnkit } from './run-cli.js';

/** The TypeScript scenario, as resume reads it in the test of a ready-made model (the others run its plain-Node build). */
const CHARGE_TS = fileURLToPath(new URL('./fixtures/charge.mts', import.meta.url));
const CHARGE = builtFixture(CHARGE_TS);
const tempDir = (): Promise<string> => mkdtemp(join(tmpdir(), 'turnkit-cli-'));
const sha256 = (bytes: Buffer | string): string => createHash('sha256').update(bytes).digest('hex');
const readJson = async (file: string): Promise<Record<string, unknown>> =>
  JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
const charges = async (dir: string): Promise<string[]> =>
  existsSync(join(dir, 'side-effects.log')) ? (await readFile(join(dir, 'side-effects.log'), 'utf8')).trimEnd().split('\n') : [];

/** Runs the charge scenario in `dir` until it suspends on call_1; returns the suspended-turn file. */
async function suspendCharge(dir: string, scenario = CHARGE): Promise<string> {
  const file = join(dir, 'turn.json');
  const run = await turnkit(['run', scenario, '--save', file], { cwd: dir });
  expect(run.code).toBe(3);
  return file;
}

// Every test works in a folder of its own and runs the binary as separate processes: the tests of a
// block run at the same time (vitest's maxConcurrency), while each process waits on its own start-up.

/** A folder where a scenario module can import the @turnkit packages (as in a user's project). */
async function projectDir(): Promise<string> {
  const dir = await tempDir();
  await symlink(join(REPO, 'packages/cli/node_modules'), join(dir, 'node_modules'), 'dir');
  await writeFile(join(dir, 'package.json'), '{ "type": "module" }\n');
  return dir;
}

describe.concurrent('a resume file is data, never code', () => {
  it('a hand-written file naming a payload module is refused, blaming the file, before the payload is imported', async () => {
    const dir = await tempDir();
    const payload = join(dir, 'payload.mjs');
    await writeFile(
      payload,
      `import { writeFileSync } from 'node:fs';\nwriteFileSync(${JSON.stringify(join(dir, 'MARKER'))}, 'the payload ran');\nexport default {};\n`,
    );
    const common = {
      kind: 'turnkit-suspended-turn',
      scenario: payload,
      options: { stream: false, provider: null },
      modelCalls: 0,
      state: {},
      transcript: [],
      pending: [{ call: { id: 'call_1', name: 'charge', input: {} } }],
      grants: [],
    };
    const crafted: [string, Record<string, unknown>, RegExp][] = [
      [
        'as the first file format',
        { ...common, version: 1 },
        /was written by an older turnkit that did not record a hash of its scenario/,
      ],
      [
        'with the payload hash recorded',
        { ...common, version: 2, scenarioSha256: sha256(await readFile(payload)) },
        /is not a suspended turn that `turnkit run` wrote \(at state: Invalid turn state/,
      ],
      [
        'with a pending call its state does not have',
        {
          ...(await readJson(await suspendCharge(dir))),
          scenario: payload,
          scenarioSha256: sha256(await readFile(payload)),
          pending: [{ call: { id: 'call_9', name: 'charge', input: {} } }],
        },
        /its pending calls \(call_9\) are not the undecided parked calls of its state \(call_1\)/,
      ],
    ];
    for (const [what, content, message] of crafted) {
      const file = join(dir, 'crafted.json');
      await writeFile(file, JSON.stringify(content));
      const run = await turnkit(['resume', file, '--approve', 'call_1'], { cwd: dir });
      expect(existsSync(join(dir, 'MARKER')), `the payload ran for a crafted file ${what}`).toBe(false);
      expect(run.code, what).toBe(2);
      expect(run.stderr, what).toMatch(new RegExp(`^turnkit: ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} `));
      expect(run.stderr, what).toMatch(message);
      expect(run.stderr.trimEnd().split('\n'), what).toHaveLength(1);
    }
  });

  it('a scenario changed since the save is refused before it is imported; --scenario loads an unchanged copy', async () => {
    const dir = await projectDir();
    const scenario = join(dir, 'charge.mjs');
    await copyFile(CHARGE, scenario);
    const original = await readFile(scenario);
    const file = await suspendCharge(dir, scenario);
    expect((await readJson(file)).scenarioSha256).toBe(sha256(original));

    await appendFile(
      scenario,
      `\nimport { writeFileSync } from 'node:fs';\nwriteFileSync(${JSON.stringify(join(dir, 'MARKER'))}, 'the tampered scenario ran');\n`,
    );
    const tampered = await turnkit(['resume', file, '--approve', 'call_1'], { cwd: dir });
    expect(existsSync(join(dir, 'MARKER'))).toBe(false);
    expect(tampered.code).toBe(2);
    expect(tampered.stderr).toBe(
      `turnkit: ${scenario} has changed since the turn in ${file} was saved: its sha256 is ${sha256(await readFile(scenario)).slice(0, 12)}…, the file recorded ${sha256(original).slice(0, 12)}…; nothing was loaded. Resume with the scenario as it was (--scenario PATH), or run the scenario again to start a new turn.\n`,
    );
    // Refused before the claim: the file can still be resumed, with the scenario as it was.
    const copy = join(dir, 'as-saved.mjs');
    await writeFile(copy, original);
    const resumed = await turnkit(['resume', file, '--approve', 'call_1', '--scenario', copy, '--save', join(dir, 'next.json')], {
      cwd: dir,
    });
    expect(resumed.stderr).toBe('');
    expect(resumed.code).toBe(3);
    expect(resumed.stdout).toContain(`turnkit ${copy} · scenario model`);
    expect(await charges(dir)).toEqual(['call_1 charged 5']);
  });

  it('--scenario with another file is refused, naming the recorded scenario', async () => {
    const dir = await tempDir();
    const file = await suspendCharge(dir);
    const other = join(dir, 'other.json');
    await writeFile(other, '{ "input": "hi", "tools": [] }');
    const run = await turnkit(['resume', file, '--approve', 'call_1', '--scenario', other], { cwd: dir });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      `turnkit: ${other} is not the scenario (${CHARGE}) with which the turn in ${file} was saved: its sha256 is ${sha256(await readFile(other)).slice(0, 12)}…`,
    );
    expect(await charges(dir)).toEqual([]);
  });
});

describe.concurrent('one approval, one execution', () => {
  it('two concurrent resumes of one file run the approved tool once', async () => {
    const dir = await tempDir();
    const file = await suspendCharge(dir);
    const runs = await Promise.all([
      turnkit(['resume', file, '--approve', 'call_1', '--save', join(dir, 'a.json')], { cwd: dir }),
      turnkit(['resume', file, '--approve', 'call_1', '--save', join(dir, 'b.json')], { cwd: dir }),
    ]);
    expect(await charges(dir)).toEqual(['call_1 charged 5']);
    expect(runs.map((r) => r.code).sort()).toEqual([2, 3]);
    const refused = runs.find((r) => r.code === 2)!;
    expect(refused.stderr).toMatch(
      new RegExp(`^turnkit: ${file} (was already resumed \\(at \\S+ by process \\d+|is being resumed by process \\d+)`),
    );
    expect(await readdir(dir)).not.toContain('turn.json.lock');
  });

  it('a resume that suspends again into another file (--save) uses up the original', async () => {
    const dir = await tempDir();
    const file = await suspendCharge(dir);
    const next = join(dir, 'next.json');
    const first = await turnkit(['resume', file, '--approve', 'call_1', '--save', next], { cwd: dir });
    expect(first.code).toBe(3);
    expect(first.stdout).toContain(`turnkit resume ${next} --approve call_2`);
    const again = await turnkit(['resume', file, '--approve', 'call_1'], { cwd: dir });
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(
      new RegExp(
        `^turnkit: ${file} was already resumed \\(at \\S+ by process \\d+; the turn was suspended again into ${next}\\): one approval runs its tools once, so it cannot be resumed again; resume ${next} instead\\.\\n$`,
      ),
    );
    expect(await charges(dir)).toEqual(['call_1 charged 5']);
    const rest = await turnkit(['resume', next, '--approve', 'call_2'], { cwd: dir });
    expect(rest.code).toBe(0);
    expect(await charges(dir)).toEqual(['call_1 charged 5', 'call_2 charged 7']);
  });

  it('a resume that dies after its tool ran leaves the file marked: it is not run again', async () => {
    const dir = await tempDir();
    const file = await suspendCharge(dir);
    const crashed = await turnkit(['resume', file, '--approve', 'call_1'], { cwd: dir, env: { CRASH_AFTER_CHARGE: '1' } });
    expect(crashed.code).not.toBe(0);
    expect(await charges(dir)).toEqual(['call_1 charged 5']);
    const consumed = (await readJson(file)).consumed as { pid: number };
    expect(consumed.pid).toBeGreaterThan(0);
    const again = await turnkit(['resume', file, '--approve', 'call_1'], { cwd: dir });
    expect(again.code).toBe(2);
    expect(again.stderr).toContain(
      `by process ${consumed.pid}; its approved calls ran then, or are running now): one approval runs its tools once, so it cannot be resumed again; run the scenario again to start a new turn.`,
    );
    expect(await charges(dir)).toEqual(['call_1 charged 5']);
  });
});

describe.concurrent('counters read from a resume file are bounded', () => {
  it('a modelCalls above the count of the state is refused', async () => {
    const dir = await tempDir();
    const file = await suspendCharge(dir);
    await writeFile(file, JSON.stringify({ ...(await readJson(file)), modelCalls: 1e15 }));
    const run = await turnkit(['resume', file, '--approve', 'call_1'], { cwd: dir });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('(modelCalls is 1000000000000000, more than the 1 model calls its state counts)');
    expect(await charges(dir)).toEqual([]);
  });

  it('a huge modelCalls that the state agrees with is blamed on the file, before the approved tool runs', async () => {
    const dir = await tempDir();
    const file = await suspendCharge(dir);
    const saved = await readJson(file);
    const state = saved.state as { usage: Record<string, number> };
    await writeFile(
      file,
      JSON.stringify({ ...saved, modelCalls: 1e15, state: { ...state, usage: { ...state.usage, modelCalls: 1e15 } } }),
    );
    const run = await turnkit(['resume', file, '--approve', 'call_1', '--save', join(dir, 'next.json')], { cwd: dir });
    expect(run.stderr).toBe(
      `turnkit: ${file}: the model of scenario ${CHARGE} cannot continue from modelCalls 1000000000000000, the count the file records (scriptedModel option startAt must be a whole number from 0 to 3 (the script has 3 steps), got 1000000000000000. Pass the usage.modelCalls of the suspended turn you are resuming.); the file was changed since it was saved, or was never one that \`turnkit run\` wrote. Nothing was run.\n`,
    );
    expect(run.code).toBe(2);
    expect(await charges(dir)).toEqual([]);
    expect((await readJson(file)).consumed).toBeUndefined();
  });

  it('a grant the dispatcher refuses is blamed on the file, and the file is not used up', async () => {
    const dir = await tempDir();
    const file = await suspendCharge(dir);
    const original = await readFile(file, 'utf8');
    await writeFile(
      file,
      JSON.stringify({ ...JSON.parse(original), grants: [{ scope: 'session' }, { scope: 'tool', tool: 'no spaces allowed' }] }),
    );
    const run = await turnkit(['resume', file, '--approve', 'call_1'], { cwd: dir });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(
      new RegExp(
        `^turnkit: ${file} is not a suspended turn that \`turnkit run\` wrote \\(at grants\\.1: Grant \\{"scope":"tool","tool":"no spaces allowed"\\} is invalid: `,
      ),
    );
    expect(run.stderr).not.toContain(CHARGE);
    expect(run.stdout).toBe('');
    expect(await charges(dir)).toEqual([]);
    await writeFile(file, original);
    const resumed = await turnkit(['resume', file, '--approve', 'call_1', '--save', join(dir, 'next.json')], { cwd: dir });
    expect(resumed.code).toBe(3);
  });
});

describe.concurrent('output paths are checked before anything runs', () => {
  it.each([
    [
      'a folder that does not exist',
      (dir: string) => join(dir, 'missing', 'next.json'),
      (dir: string) => `: the folder ${join(dir, 'missing')} does not exist; create it or give another path. Nothing was run.`,
    ],
    [
      'a folder',
      (dir: string) => dir,
      (dir: string) => ` is a folder; give the path of a file in it, such as ${join(dir, 'turn.json')}. Nothing was run.`,
    ],
  ])(
    'a resume with --save naming %s exits 2 before the approved tool runs, and the file can still be resumed',
    async (_what, target, message) => {
      const dir = await tempDir();
      const file = await suspendCharge(dir);
      for (const flag of ['--save', '--trace']) {
        const run = await turnkit(['resume', file, '--approve', 'call_1', flag, target(dir)], { cwd: dir });
        expect(run.stderr).toBe(`turnkit: ${flag} ${target(dir)}${message(dir)}\n`);
        expect(run.code).toBe(2);
        expect(run.stdout).toBe('');
        expect(await charges(dir)).toEqual([]);
      }
      const resumed = await turnkit(['resume', file, '--approve', 'call_1', '--save', join(dir, 'next.json')], { cwd: dir });
      expect(resumed.code).toBe(3);
      expect(await charges(dir)).toEqual(['call_1 charged 5']);
    },
  );
});

describe.concurrent('resuming needs a model function', () => {
  it('a scenario exporting a ready-made model cannot be resumed, and says what to export', async () => {
    const dir = await projectDir();
    const scenario = join(dir, 'instance.mts');
    await writeFile(
      scenario,
      (await readFile(CHARGE_TS, 'utf8'))
        .replace('model: ({ startAt }) => scriptedModel(', 'model: scriptedModel(')
        .replace(', { startAt }),', '),'),
    );
    expect(await readFile(scenario, 'utf8')).toContain("model: scriptedModel([toolCalls(call('charge', { cents: 5 }))");
    const file = await suspendCharge(dir, scenario);
    const run = await turnkit(['resume', file, '--approve', 'call_1'], { cwd: dir });
    expect(run.stderr).toBe(
      `turnkit: Scenario instance.mts exports a ready-made model, which cannot continue the suspended turn in ${file} (a scripted model would start its script again). Export a function of the calls already made instead: model: ({ startAt }) => scriptedModel(steps, { startAt }).\n`,
    );
    expect(run.code).toBe(2);
    expect(await charges(dir)).toEqual([]);
    expect((await readJson(file)).consumed).toBeUndefined();
  });
});

/** The words a POSIX shell makes of `line` (the binary replaced by printf, run in `dir`). */
function shellWords(line: string, dir: string): string[] {
  const command = line.trim().replace(/^turnkit /, "printf '%s\\n' ");
  return execFileSync('sh', ['-c', command], { cwd: dir, encoding: 'utf8' }).slice(0, -1).split('\n');
}

/** A .json scenario whose scripted model makes one call of `delete` (approval needed) with `id`. */
async function oneCallScenario(
  dir: string,
  id: string,
  extra: { text?: string; input?: unknown; result?: unknown } = {},
): Promise<string> {
  const file = join(dir, 'scenario.json');
  const scenario = {
    input: 'Delete it.',
    tools: [{ name: 'delete', description: 'Deletes.', needsApproval: true, result: extra.result ?? { deleted: true } }],
    model: [
      {
        calls: [{ name: 'delete', id, input: extra.input ?? { path: 'a' } }],
        ...(extra.text === undefined ? {} : { text: extra.text }),
      },
      { text: 'Done.' },
    ],
  };
  await writeFile(file, JSON.stringify(scenario));
  return file;
}

describe.concurrent('what a model chooses is printed safely', () => {
  it('an id with shell syntax arrives intact as one argument when the printed command is pasted', async () => {
    const dir = await tempDir();
    const id = 'x;touch${IFS}INJECTED;#';
    const scenario = await oneCallScenario(dir, id);
    const run = await turnkit(['run', scenario, '--save', 'turn.json'], { cwd: dir });
    expect(run.code).toBe(3);
    const [approve, reject] = run.stdout.split('\n').filter((line) => line.startsWith('  turnkit resume '));
    expect(shellWords(approve!, dir)).toEqual(['resume', './turn.json', '--approve', id]);
    expect(shellWords(reject!, dir)).toEqual(['resume', './turn.json', '--reject', `${id}=reason for the model`]);
    expect(await readdir(dir)).not.toContain('INJECTED');
    // And the pasted command does what it says.
    const resumed = await turnkit(shellWords(approve!, dir), { cwd: dir });
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toContain(`✓ delete ${id}`);
  });

  it('control characters in text, inputs and results are printed escaped', async () => {
    const dir = await tempDir();
    const evil = 'A\u001b[2K\rB\u009b31mC\u007fD\u202eE';
    const scenario = await oneCallScenario(dir, 'call_1', {
      text: `I will delete ${evil}.`,
      input: { path: evil },
      result: { note: evil },
    });
    const run = await turnkit(['run', scenario, '--save', 'turn.json'], { cwd: dir });
    expect(run.code).toBe(3);
    const resumed = await turnkit(['resume', 'turn.json', '--reject', `call_1=${evil}`], { cwd: dir });
    expect(resumed.code).toBe(0);
    const json = await turnkit(['run', scenario, '--json', '--save', 'other.json'], { cwd: dir });
    for (const out of [run.stdout, run.stderr, resumed.stdout, resumed.stderr, json.stdout, json.stderr]) {
      expect(out).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e]/);
    }
    const escaped = 'A\\x1b[2K\\rB\\x9b31mC\\x7fD\\u202eE';
    expect(run.stdout).toContain(`I will delete ${escaped}.`);
    expect(resumed.stdout).toContain(`resume call_1 rejected (${escaped})`);
    // JSON previews keep JSON's own escapes for C0 and escape the rest.
    expect(run.stdout).toContain('{"path":"A\\u001b[2K\\rB\\x9b31mC\\x7fD\\u202eE"}');
    // --json stays parseable JSON of the same values.
    const result = JSON.parse(json.stdout.trimEnd().split('\n').at(-1)!) as { pending: { call: { input: { path: string } } }[] };
    expect(result.pending[0]!.call.input.path).toBe(evil);
  });

  it('a call id with control characters fails the turn as an invalid model response, printed escaped', async () => {
    const dir = await tempDir();
    const scenario = await oneCallScenario(dir, 'call\u001b[2K\r\u009b1;1Hx');
    const run = await turnkit(['run', scenario, '--save', 'turn.json'], { cwd: dir });
    expect(run.code).toBe(1);
    expect(run.stderr).toBe('');
    expect(run.stdout).toContain(
      '✖ failed: invalid_model_response The model\'s reply was malformed: response.toolCalls[0].id contains the control character U+001B at index 4 (got "call\\u001b[2K\\r\\x9b1;1Hx"); control characters are not allowed.\n',
    );
    expect(run.stdout + run.stderr).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
    expect(await readdir(dir)).not.toContain('turn.json');
  });

  it.each([
    ['--approve', ['--approve', '__proto__'], '✓ delete __proto__'],
    ['--reject', ['--reject', '__proto__=not that one'], '✗ delete __proto__ → "rejected: not that one'],
  ])('a call with id __proto__ can be decided with %s', async (_flag, decision, shown) => {
    const dir = await tempDir();
    const scenario = await oneCallScenario(dir, '__proto__');
    const run = await turnkit(['run', scenario, '--save', 'turn.json'], { cwd: dir });
    expect(run.code).toBe(3);
    expect(run.stdout).toContain('  turnkit resume ./turn.json --approve __proto__\n');
    const resumed = await turnkit(['resume', 'turn.json', ...decision], { cwd: dir });
    expect(resumed.stderr).toBe('');
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toContain(shown);
    expect(resumed.stdout).toContain('✔ stopped: completed');
  });
});
