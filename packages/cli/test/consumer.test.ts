// The packages as a user gets them: `pnpm pack` every published package, install the tarballs
// with npm into a fresh project (zod, fast-check and the AI SDK come from the npm registry), then
// type-check and run a program there (test/consumer/app.ts and the README's first agent), require()
// every package from CommonJS, and run the installed CLI. Needs the build (`pnpm test` builds
// first; alone: `pnpm build`).
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const HERE = fileURLToPath(new URL('./consumer/', import.meta.url));
const PUBLISHED = ['core', 'dispatch', 'inline', 'stream', 'testing', 'check', 'ai-sdk', 'store', 'cli', 'otel', 'mcp'];
const SETUP_TIMEOUT = 240_000;

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

function run(command: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv = process.env): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      { cwd, env: { ...env, NO_COLOR: '1' }, timeout: SETUP_TIMEOUT, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1;
        resolve({
          code,
          stdout,
          stderr: error !== null && typeof error.code !== 'number' ? `${stderr}${error.message}` : stderr,
        });
      },
    );
  });
}

async function ok(command: string, args: readonly string[], cwd: string): Promise<Run> {
  const result = await run(command, args, cwd);
  if (result.code !== 0)
    throw new Error(`\`${command} ${args.join(' ')}\` in ${cwd} exited with ${result.code}:\n${result.stdout}\n${result.stderr}`);
  return result;
}

/** The pnpm running this test (`pnpm test`), else the one on PATH. */
function pnpm(): [string, string[]] {
  const execPath = process.env.npm_execpath;
  return execPath !== undefined && /pnpm/.test(execPath) && execPath.endsWith('.cjs')
    ? [process.execPath, [execPath]]
    : ['pnpm', []];
}

/** The ```ts block of packages/<name>/README.md. */
function readmeSample(name: string): string {
  const readme = readFileSync(join(REPO, 'packages', name, 'README.md'), 'utf8');
  const sample = readme.match(/```ts\n([\s\S]*?)```/)?.[1];
  if (sample === undefined) throw new Error(`packages/${name}/README.md has no \`\`\`ts sample.`);
  return sample;
}

let dir = '';
let project = '';
let tsc: Run;

beforeAll(async () => {
  const missing = PUBLISHED.filter((name) => !existsSync(join(REPO, 'packages', name, 'dist', 'index.js')));
  if (missing.length > 0)
    throw new Error(`packages/{${missing.join(',')}}/dist is missing: run \`pnpm build\` first (\`pnpm test\` does).`);
  dir = mkdtempSync(join(tmpdir(), 'turnkit-consumer-'));
  const tarballs = join(dir, 'tarballs');
  const [pnpmCommand, pnpmArgs] = pnpm();
  await Promise.all(
    PUBLISHED.map((name) => ok(pnpmCommand, [...pnpmArgs, 'pack', '--pack-destination', tarballs], join(REPO, 'packages', name))),
  );

  project = join(dir, 'app');
  await ok('mkdir', ['-p', project], dir);
  const dependencies = Object.fromEntries(
    PUBLISHED.map((name) => [`@turnkit/${name}`, `file:../tarballs/turnkit-${name}-0.1.0.tgz`]),
  );
  writeFileSync(
    join(project, 'package.json'),
    JSON.stringify(
      {
        name: 'app',
        private: true,
        type: 'module',
        // The peers of @turnkit/otel and @turnkit/mcp, and an MCP server for the mcp README's sample.
        dependencies: {
          ...dependencies,
          zod: '^4',
          '@opentelemetry/api': '^1.9',
          '@modelcontextprotocol/client': '^2',
          '@modelcontextprotocol/server': '^2',
        },
      },
      null,
      2,
    ),
  );
  writeFileSync(
    join(project, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'nodenext',
        moduleResolution: 'nodenext',
        strict: true,
        exactOptionalPropertyTypes: true,
        noUncheckedIndexedAccess: true,
        skipLibCheck: false,
        outDir: 'out',
        rootDir: '.',
        types: ['node'],
        typeRoots: [join(REPO, 'node_modules', '@types')],
      },
      include: ['*.ts'],
    }),
  );
  copyFileSync(join(HERE, 'app.ts'), join(project, 'app.ts'));
  copyFileSync(join(HERE, 'require-all.cjs'), join(project, 'require-all.cjs'));
  // The README's first agent ("Run a turn in-process") and each package README's sample, as a user would paste them.
  copyFileSync(join(REPO, 'packages', 'inline', 'examples', 'readme.ts'), join(project, 'first-agent.ts'));
  for (const name of PUBLISHED) writeFileSync(join(project, `readme-${name}.ts`), readmeSample(name));

  await ok('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'], project);
  // Emits out/*.js even when a type error is found, so the runs below still say what works.
  tsc = await run(process.execPath, [join(REPO, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], project);
}, SETUP_TIMEOUT);

afterAll(() => {
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
});

describe('the packed packages in a fresh npm project', () => {
  it('ship dist, README.md and LICENSE, and no sources', () => {
    for (const name of PUBLISHED) {
      const files = readdirSync(join(project, 'node_modules', '@turnkit', name));
      expect(files, name).toContain('dist');
      expect(files, name).toContain('README.md');
      expect(files, name).toContain('LICENSE');
      expect(files, name).not.toContain('src');
    }
  });

  it('type-check with strict and exactOptionalPropertyTypes, our declaration files included (skipLibCheck off)', () => {
    // One entry per error, continuation lines included; other libraries' declarations (xstate's do
    // not pass exactOptionalPropertyTypes) are not ours to check.
    const errors = `${tsc.stdout}${tsc.stderr}`.split(/\n(?=\S)/).filter((entry) => entry.trim() !== '');
    const ours = errors.filter((entry) => !entry.startsWith('node_modules/') || entry.startsWith('node_modules/@turnkit/'));
    expect(ours.join('\n')).toBe('');
  });

  it('run a turn with a tool, a streamed turn and an approval (suspend, then resume)', async () => {
    const result = JSON.parse((await ok(process.execPath, ['out/app.js'], project)).stdout) as Record<string, unknown>;
    expect(result).toEqual({
      ran: {
        status: 'stopped',
        output: '3',
        lines: ['user: What is 1 + 2?', 'assistant: [call_1 add]', 'tool call_1 add: ok 3', 'assistant: 3'],
      },
      streamed: {
        status: 'stopped',
        output: '4',
        events: expect.arrayContaining(['tool_call', 'tool_result', 'text_delta', 'done']) as unknown,
      },
      suspended: { status: 'suspended', pending: ['deploy'] },
      resumed: {
        status: 'stopped',
        output: 'Deployed.',
        lines: [
          'user: Deploy the api.',
          'assistant: [call_1 deploy]',
          'tool call_1 deploy: ok "deployed api"',
          'assistant: Deployed.',
        ],
      },
      core: 'calling_model',
      check: { states: expect.any(Number) as unknown, violations: 0, arbitrary: 'function' },
      aiSdk: 'function',
      cli: { loadScenarioFile: 'function', suspendedExit: 3, scenarioInput: 'hi' },
      protocol: { effects: [{ type: 'commit', token: 3, applied: [], release: false }], claimable: true },
    });
  });

  it("run the README's first agent as written", async () => {
    const { stdout } = await ok(process.execPath, ['out/first-agent.js'], project);
    expect(stdout).toBe(
      'system: You are a calculator.\nuser: What is 1 + 2?\nassistant: [call_1 add]\ntool call_1 add: ok 3\nassistant: 1 + 2 = 3\nstopped completed 1 + 2 = 3\n',
    );
  });

  it.each(PUBLISHED.filter((name) => name !== 'cli'))("run the sample of @turnkit/%s's README", async (name) => {
    const env = { ...process.env };
    delete env.OPENAI_API_KEY; // the ai-sdk sample calls OpenAI only with a key
    const sample = await run(process.execPath, [`out/readme-${name}.js`], project, env);
    expect(sample.stderr).toBe('');
    expect(sample.code).toBe(0);
  });

  it('load the build under --conditions=source (the repository condition is @turnkit/source)', async () => {
    const { stdout } = await ok(
      process.execPath,
      [
        '--conditions=source',
        '--input-type=module',
        '-e',
        "const m = await import('@turnkit/core'); console.log(typeof m.step);",
      ],
      project,
    );
    expect(stdout).toBe('function\n');
  });

  it('can be required from CommonJS (Node >= 20.19 requires ES modules without top-level await)', async () => {
    const { stdout } = await ok(process.execPath, ['require-all.cjs'], project);
    const loaded = { loaded: true };
    expect(JSON.parse(stdout)).toEqual(Object.fromEntries(PUBLISHED.map((name) => [name, loaded])));
  });
});

describe('the installed turnkit binary', () => {
  const bin = (): string => join(project, 'node_modules', '.bin', 'turnkit');
  const PATHS = /(?:[\w.@-]+\/)+[\w.-]+\.(?:ts|mts|js|mjs|json|ndjson)\b/g;

  it('--help of every command mentions only files the CLI package ships, and its example runs', async () => {
    const helps = await Promise.all(
      [[], ['run'], ['resume'], ['replay'], ['graph'], ['check']].map((command) => ok(bin(), [...command, '--help'], project)),
    );
    const text = helps.map((help) => help.stdout).join('\n');
    expect(text).not.toContain('packages/');
    const mentioned = [...new Set(text.match(PATHS) ?? [])];
    expect(mentioned).toContain('node_modules/@turnkit/cli/examples/trip-planner.ts');
    for (const path of mentioned) expect(existsSync(join(project, path)), `${path} (mentioned in --help)`).toBe(true);
    const example = await run(bin(), ['run', 'node_modules/@turnkit/cli/examples/trip-planner.ts'], project);
    expect(example.stderr).toBe('');
    expect(example.code).toBe(0);
    expect(example.stdout).toContain('stopped: completed');
  });

  it('runs the scenario of its README', async () => {
    const scenario = await run(bin(), ['run', 'readme-cli.ts'], project);
    expect(scenario.stderr).toBe('');
    expect(scenario.stdout).toContain('stopped: completed');
    expect(scenario.code).toBe(0);
  });

  it('a usage error is one line on stderr, exit code 2, naming only the user file', async () => {
    const missing = await run(bin(), ['run', 'no-such-scenario.ts'], project);
    expect(missing.code).toBe(2);
    expect(missing.stdout).toBe('');
    expect(missing.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(missing.stderr).toContain('no-such-scenario.ts');
    expect(missing.stderr.match(PATHS) ?? []).toEqual([]);
  });

  it('serve, without its optional peers installed, says what to install (exit 2)', async () => {
    const serve = await run(bin(), ['serve', '--port', '0'], project);
    expect(serve.code).toBe(2);
    expect(serve.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(serve.stderr).toContain('npm i @turnkit/server @turnkit/store');
  });

  it('depends on the other packages by caret ranges (workspace:^ when packed)', () => {
    const pkg = JSON.parse(readFileSync(join(project, 'node_modules', '@turnkit', 'cli', 'package.json'), 'utf8')) as {
      version: string;
      dependencies: Record<string, string>;
    };
    expect(pkg.dependencies['@turnkit/core']).toBe('^0.1.0');
  });
});
