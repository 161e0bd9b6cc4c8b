import { mkdtemp, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { completion, FAKE_MODEL, startFakeOpenAIServer } from '@turnkit/testing';
import { example, REPO, turnkit } from './run-cli.js';

describe('turnkit graph', () => {
  it('prints the turn machine as Mermaid by default', async () => {
    const run = await turnkit(['graph']);
    expect(run.code).toBe(0);
    expect(run.stdout.startsWith('stateDiagram-v2\n')).toBe(true);
    expect(run.stdout).toContain('awaiting_approval');
  });

  it('prints Graphviz dot with --format dot', async () => {
    const run = await turnkit(['graph', '--format', 'dot']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^digraph /);
    expect(run.stdout.trimEnd().endsWith('}')).toBe(true);
  });
});

describe('turnkit check', () => {
  it('an exploration that would outgrow the heap stops before it, says so and exits as a clean check does', async () => {
    // maxIterations 4 holds about 300 MB of states at its widest; this Node is given 128 MB.
    const run = await turnkit(['check', '--max-iterations', '4', '--loop-threshold', '3', '--purity-sample', '16'], {
      env: { NODE_OPTIONS: '--max-old-space-size=128' },
    });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(
      /^depth +\d+ \(cut off: the exploration had taken most of the heap Node allows; lower the limits, or give Node more with NODE_OPTIONS=--max-old-space-size=MB\)$/m,
    );
  });

  it('--agent: a check that would outgrow the heap stops before it, says so and exits as a clean check does', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'turnkit-check-heap-'));
    const file = join(dir, 'files-4.ts');
    const filesAgent = join(REPO, 'packages/check/examples/files-agent.ts');
    await writeFile(
      file,
      `import { agents, properties } from ${JSON.stringify(filesAgent)};\nexport const agent = { ...agents.files, limits: { maxIterations: 4 } };\nexport { properties };\n`,
    );
    // maxIterations 4 goes past 2 GB of heap; this Node is given 128 MB.
    const run = await turnkit(['check', '--agent', file], { env: { NODE_OPTIONS: '--max-old-space-size=128' } });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(
      /^depth +\d+ \(cut off at [\d,]+ states: the check had taken most of the heap Node allows; check with a smaller limits\.maxIterations, or give Node more with NODE_OPTIONS=--max-old-space-size=MB\)$/m,
    );
  });

  it('explores and prints states, transitions, outcomes and no violations', async () => {
    const run = await turnkit(['check', '--depth', '6', '--max-iterations', '1', '--loop-threshold', '2', '--repairs', '0']);
    expect(run.code).toBe(0);
    const number = (name: string): number => Number(new RegExp(`^${name}\\s+(\\d+)`, 'm').exec(run.stdout)?.[1]);
    expect(number('states')).toBeGreaterThan(10);
    expect(number('transitions')).toBeGreaterThan(number('states'));
    expect(number('violations')).toBe(0);
    expect(run.stdout).toMatch(/^ {2}stopped:completed\s+\d+$/m);
    expect(run.stdout).toContain('depth        6 (cut off at --depth 6');
    expect(run.stdout).toContain('✔ no invariant was violated');
  });
});

// Each a process of its own, in no folder but the repository's: they run at the same time.
describe.concurrent('help', () => {
  it.each([
    [[]],
    [['run']],
    [['resume']],
    [['replay']],
    [['graph']],
    [['check']],
    [['ls']],
    [['show']],
    [['approve']],
    [['reject']],
    [['cancel']],
    [['worker']],
    [['watch']],
    [['dev']],
  ])('turnkit %s --help shows usage and an example (exit 0)', async (command) => {
    const run = await turnkit([...command, '--help']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Usage: turnkit');
    expect(run.stdout).toMatch(/Examples?:\n {2}\$ turnkit /);
  });
});

describe.concurrent('bad input: one line on stderr, exit 2', () => {
  const cases: [string, string[], RegExp][] = [
    ['unknown command', ['deploy'], /unknown command 'deploy'/],
    ['unknown flag', ['run', example('trip-planner.ts'), '--fast'], /unknown option '--fast'/],
    ['missing argument', ['run'], /missing required argument 'scenario'/],
    ['missing scenario file', ['run', 'no-such-scenario.ts'], /scenario file no-such-scenario\.ts does not exist/],
    ['scenario of the wrong kind', ['run', 'package.json'], /package\.json is not a valid scenario at input/],
    ['unsupported extension', ['run', 'README.md'], /use a \.ts, \.js or \.json file/],
    ['missing trace file', ['replay', 'no-such-trace.json'], /trace file no-such-trace\.json does not exist/],
    ['a file that is not a trace', ['replay', 'package.json'], /is not a turnkit trace/],
    ['a file that is not a suspended turn', ['resume', 'package.json', '--approve', 'call_1'], /is not a suspended turn/],
    ['bad number', ['check', '--depth', 'ten'], /--depth <n>' argument 'ten' is invalid\. Expected a whole number ≥ 1/],
    ['negative number', ['check', '--max-iterations', '-2'], /--max-iterations <n>' argument '-2' is invalid/],
    ['fractional number', ['check', '--loop-threshold', '1.5'], /--loop-threshold <n>' argument '1\.5' is invalid/],
    ['an agent option without --agent', ['check', '--max-states', '100'], /^turnkit: --max-states goes with --agent/],
    ['a bad --max-states', ['check', '--agent', 'x.ts', '--max-states', '0'], /--max-states <n>' argument '0' is invalid/],
    [
      'a limit core refuses',
      ['check', '--loop-threshold', '1'],
      /^turnkit: --loop-threshold 1 is invalid: limits\.loopThreshold must be 0 \(off\) or at least 2/,
    ],
    [
      'a bad --save path',
      ['run', example('trip-planner.ts'), '--save', 'no-such-folder/turn.json'],
      /^turnkit: --save no-such-folder\/turn\.json: the folder \S+no-such-folder does not exist; create it or give another path\. Nothing was run\.\n/,
    ],
    [
      'a --trace path that is a folder',
      ['run', example('trip-planner.ts'), '--trace', 'packages'],
      /^turnkit: --trace packages is a folder; give the path of a file in it, such as packages\/turn\.json\. Nothing was run\.\n/,
    ],
    ['bad format', ['graph', '--format', 'png'], /Allowed choices are mermaid, dot/],
    [
      'bad provider',
      ['run', example('trip-planner.ts'), '--provider', 'gemini', '--model', 'x'],
      /Allowed choices are openai, anthropic, openai-compatible/,
    ],
    [
      'provider without model',
      ['run', example('trip-planner.ts'), '--provider', 'openai'],
      /--provider openai needs --model NAME/,
    ],
    ['model without provider', ['run', example('trip-planner.ts'), '--model', 'gpt-4.1'], /--model needs --provider/],
    [
      'openai-compatible without base url',
      ['run', example('trip-planner.ts'), '--provider', 'openai-compatible', '--model', 'm'],
      /needs --base-url/,
    ],
    [
      'bad base url',
      ['run', example('trip-planner.ts'), '--provider', 'openai-compatible', '--model', 'm', '--base-url', 'localhost'],
      /argument 'localhost' is invalid\. Expected a URL/,
    ],
    ['too many arguments', ['replay', 'a.json', 'b.json'], /too many arguments for 'replay'/],
    [
      // A command a person waits for tries once (no 10 s wait for a server that is not there).
      'a Postgres that refuses connections',
      ['ls', '--store', 'postgres://postgres@127.0.0.1:9/turnkit'],
      /^turnkit: Could not open the store postgres:\/\/postgres@127\.0\.0\.1:9\/turnkit: connect ECONNREFUSED/,
    ],
  ];
  it.each(cases)('%s', async (_name, args, message) => {
    const run = await turnkit(args, { env: { OPENAI_API_KEY: undefined, ANTHROPIC_API_KEY: undefined } });
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr.endsWith('\n')).toBe(true);
    expect(run.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(run.stderr).toMatch(/^turnkit: /);
    expect(run.stderr).toMatch(message);
  });

  it('a scenario module with a mistake names the file and the field', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'turnkit-cli-'));
    const file = join(dir, 'broken.ts');
    await writeFile(file, 'export default { tools: [] as unknown[], prompt: 1 };\n');
    const run = await turnkit(['run', file]);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      `turnkit: Scenario ${file}: unknown field 'prompt'; a scenario has input, tools, model, limits, system, output, permissions, policy, hooks, budget, check, compact, observe, maxRunning, mcpServers, name, delegates, handoffs, models.\n`,
    );
    await writeFile(file, 'export const scenario = { input: "hi", tools: [] };\n');
    const noModel = await turnkit(['run', file]);
    expect(noModel.code).toBe(2);
    expect(noModel.stderr).toContain('has no model: add `model` to it, or run it against a real one with --provider');
  });

  it('a scenario whose model function throws names the file and the error', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'turnkit-cli-'));
    await writeFile(
      join(dir, 'throws.mts'),
      'export const scenario = { input: "hi", tools: [], model: () => { throw new Error("no model today"); } };\n',
    );
    const run = await turnkit(['run', 'throws.mts'], { cwd: dir });
    expect(run.stderr).toBe('turnkit: Scenario throws.mts: its model function threw: no model today\n');
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
  });

  it('a scenario module that runs as CommonJS loads the @turnkit packages (Node >= 20.19 requires ES modules)', async () => {
    // Outside any package, with the @turnkit packages resolvable as in a user's project.
    const dir = await mkdtemp(join(tmpdir(), 'turnkit-cli-'));
    await symlink(join(REPO, 'packages/cli/node_modules'), join(dir, 'node_modules'), 'dir');
    const source = [
      "import { defineTool } from '@turnkit/dispatch';",
      "import { scriptedModel } from '@turnkit/testing';",
      "import { z } from 'zod';",
      "const ping = defineTool({ name: 'ping', description: 'Ping.', input: z.object({}), execute: () => 'pong' });",
      'void scriptedModel; // used, so that the import is kept',
      "export const scenario = { input: 'ping', tools: [ping] };",
      '',
    ].join('\n');
    for (const name of ['ping.ts', 'ping.mts']) {
      await writeFile(join(dir, name), source);
      // It loads, and stops at the next mistake: the missing model.
      const run = await turnkit(['run', name], { cwd: dir });
      expect(run.code).toBe(2);
      expect(run.stderr).toContain(`Scenario ${name} has no model`);
    }
  });

  it.each(['.ts', '.mts'])('a %s module exporting only unrelated names says it exports no scenario', async (ext) => {
    const dir = await mkdtemp(join(tmpdir(), 'turnkit-cli-'));
    // .ts outside an ES package runs as CommonJS, whose exports arrive wrapped; .mts is an ES module.
    await writeFile(join(dir, `other${ext}`), 'export const helper = 1;\nexport function greet(): string { return "hi"; }\n');
    const run = await turnkit(['run', `other${ext}`], { cwd: dir });
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      `turnkit: Scenario other${ext} exports no scenario: add \`export default { input, tools, model }\` or \`export const scenario = { input, tools, … }\`.\n`,
    );
  });

  it('a .json scenario that is not JSON is one line naming the file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'turnkit-cli-'));
    const file = join(dir, 'broken.json');
    await writeFile(file, '{ "input": "hi", ');
    const run = await turnkit(['run', file]);
    expect(run.code).toBe(2);
    expect(run.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(run.stderr).toContain(`${file} is not valid JSON`);
  });

  it.each([
    ['openai', 'OPENAI_API_KEY'],
    ['anthropic', 'ANTHROPIC_API_KEY'],
  ])('a missing API key for --provider %s names %s', async (provider, variable) => {
    const run = await turnkit(['run', example('trip-planner.ts'), '--provider', provider, '--model', 'some-model'], {
      env: { [variable]: undefined },
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      `turnkit: ${variable} is not set: set it to your ${provider === 'openai' ? 'OpenAI' : 'Anthropic'} API key to use --provider ${provider}.\n`,
    );
  });
});

describe('--provider openai-compatible against a local server', () => {
  it("runs the scenario's real tools with the server's model and prints its answer", async () => {
    const server = await startFakeOpenAIServer([
      completion({
        toolCalls: [
          { id: 'w1', name: 'get_weather', arguments: '{"city":"Lisbon","date":"2025-06-14"}' },
          { id: 'h1', name: 'search_hotels', arguments: '{"city":"Lisbon","maxNightlyEur":100}' },
        ],
        usage: { prompt: 300, completion: 40 },
      }),
      completion({ content: 'Sunny, 27 °C; Pensão Azul at 74 € a night.', usage: { prompt: 500, completion: 20 } }),
    ]);
    try {
      const run = await turnkit(
        [
          'run',
          example('trip-planner.ts'),
          '--provider',
          'openai-compatible',
          '--model',
          FAKE_MODEL,
          '--base-url',
          server.baseURL,
        ],
        {
          env: { OPENAI_COMPATIBLE_API_KEY: undefined },
        },
      );
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      expect(run.stdout).toContain(`openai-compatible ${FAKE_MODEL}`);
      expect(run.stdout).toContain('2 calls run in parallel');
      expect(run.stdout).toContain('✓ get_weather w1');
      expect(run.stdout).toContain('"name":"Pensão Azul"');
      expect(run.stdout).toContain('Sunny, 27 °C; Pensão Azul at 74 € a night.');
      expect(run.stdout).toContain('✔ stopped: completed · 2 model calls · 2 tool calls · 860 tokens (800 in, 60 out)');
      expect(server.requests).toHaveLength(2);
      const first = server.requests[0]!.body as { model: string; tools: { function: { name: string } }[] };
      expect(first.model).toBe(FAKE_MODEL);
      expect(first.tools.map((t) => t.function.name)).toEqual([
        'get_weather',
        'search_flights',
        'search_hotels',
        'estimate_budget',
      ]);
      // The tool results went back to the server in the second request.
      const second = server.requests[1]!.body as { messages: { role: string; tool_call_id?: string }[] };
      expect(second.messages.filter((m) => m.role === 'tool').map((m) => m.tool_call_id)).toEqual(['w1', 'h1']);
    } finally {
      await server.close();
    }
  });
});
