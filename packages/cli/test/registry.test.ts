// The packages as a user gets them, by name: `pnpm pack` every published package, check each
// tarball with publint and attw, publish them all to a local registry (verdaccio on 127.0.0.1, a
// throwaway storage, no uplink: `@turnkit/*` can only come from there), then, in an empty project,
// run every install line of the README, the docs and the package READMEs as written (`npm i
// @turnkit/core …`, `npm i -g @turnkit/cli` into a prefix), and the code next to them: the README's
// first agent, each package README's sample, a strict type-check, require() from CommonJS and the
// installed `turnkit` binary. Third-party packages (zod, the AI SDK, …) come from the npm registry
// (only the @turnkit scope points at the local one). Needs the build (`pnpm test` builds first;
// alone: `pnpm build`). The installed sizes it prints (TURNKIT_TEST_VERBOSE=1) are the figures of
// docs/installing.md.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testLog } from '../../../test-log.ts';
import { installLines } from './install-lines.js';
import { CLI_NODE_OPTIONS, startDev } from './run-cli.js';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const HERE = fileURLToPath(new URL('./consumer/', import.meta.url));
/** Every package that is not private, in the order they are published. */
const PUBLISHED = readdirSync(join(REPO, 'packages')).filter((name) => {
  const manifest = JSON.parse(readFileSync(join(REPO, 'packages', name, 'package.json'), 'utf8')) as { private?: boolean };
  return manifest.private !== true;
});
const SETUP_TIMEOUT = 480_000;
const LINES = installLines(REPO);

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

let dir = '';
let env: NodeJS.ProcessEnv = process.env;

/** Runs `command` with the environment `base` (by default the one npm's config points at the local registry) and `extra`. */
function run(
  command: string,
  args: readonly string[],
  cwd: string,
  extra: NodeJS.ProcessEnv = {},
  base: NodeJS.ProcessEnv = env,
): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      { cwd, env: { ...base, NO_COLOR: '1', ...extra }, timeout: SETUP_TIMEOUT, maxBuffer: 16 * 1024 * 1024 },
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

async function ok(command: string, args: readonly string[], cwd: string, base: NodeJS.ProcessEnv = env): Promise<Run> {
  const result = await run(command, args, cwd, {}, base);
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

/** A binary of the repository's node_modules/.bin. */
const bin = (name: string): string => join(REPO, 'node_modules', '.bin', name);

/** The ```ts block of packages/<name>/README.md. */
function readmeSample(name: string): string {
  const readme = readFileSync(join(REPO, 'packages', name, 'README.md'), 'utf8');
  const sample = readme.match(/```ts\n([\s\S]*?)```/)?.[1];
  if (sample === undefined) throw new Error(`packages/${name}/README.md has no \`\`\`ts sample.`);
  return sample;
}

/** Kilobytes on disk under `path` (`du -sk`, what a user sees). */
async function kilobytes(path: string): Promise<number> {
  const { stdout } = await ok('du', ['-sk', path], dir);
  return Number(stdout.split('\t')[0]);
}

/** Starts verdaccio in this process on 127.0.0.1 (a free port), storage under `root`, no uplink. */
async function startRegistry(root: string): Promise<{ server: Server; url: string }> {
  const config = join(root, 'config.yaml');
  writeFileSync(
    config,
    [
      `storage: ${JSON.stringify(join(root, 'storage'))}`,
      'auth:',
      '  htpasswd:',
      `    file: ${JSON.stringify(join(root, 'htpasswd'))}`,
      'uplinks: {}',
      'packages:',
      "  '@turnkit/*':",
      '    access: $all',
      '    publish: $authenticated',
      "  '**':",
      '    access: $all',
      'log: { type: stdout, format: json, level: error }',
      '',
    ].join('\n'),
  );
  const { runServer } = (await import('verdaccio')) as unknown as {
    runServer: (config: string) => Promise<Server>;
  };
  const server = await runServer(config);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/` };
}

/** The package.json of a packed tarball (`package/package.json` in the gzipped tar). */
function packedManifest(tgz: Buffer): { name: string; version: string } & Record<string, unknown> {
  const tar = gunzipSync(tgz);
  for (let at = 0; at + 512 <= tar.length; ) {
    const field = (start: number, length: number): string =>
      tar.toString('utf8', start, start + length).replace(/\0[\s\S]*$/, '');
    const name = field(at, 100);
    if (name === '') break;
    const size = Number.parseInt(field(at + 124, 12).trim() || '0', 8);
    const path =
      tar.toString('utf8', at + 257, at + 262) === 'ustar' && field(at + 345, 155) !== ''
        ? `${field(at + 345, 155)}/${name}`
        : name;
    if (path === 'package/package.json') return JSON.parse(tar.toString('utf8', at + 512, at + 512 + size));
    at += 512 + Math.ceil(size / 512) * 512;
  }
  throw new Error('no package/package.json in the tarball');
}

/**
 * Publishes a tarball to the local registry as `npm publish <tarball>` does (one PUT of the package
 * document with the tarball attached, its shasum and integrity), from this process: 15 npm
 * processes spent about 20 s of CPU starting npm.
 */
async function publish(url: string, token: string, tarball: string): Promise<void> {
  const data = readFileSync(tarball);
  const manifest = packedManifest(data);
  const { name, version } = manifest;
  const file = `${name}-${version}.tgz`;
  const response = await fetch(`${url}${name.replace('/', '%2f')}`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({
      _id: name,
      name,
      description: manifest.description,
      'dist-tags': { latest: version },
      versions: {
        [version]: {
          ...manifest,
          _id: `${name}@${version}`,
          dist: {
            shasum: createHash('sha1').update(data).digest('hex'),
            integrity: `sha512-${createHash('sha512').update(data).digest('base64')}`,
            tarball: `${url}${name}/-/${file}`,
          },
        },
      },
      access: null,
      _attachments: { [file]: { content_type: 'application/octet-stream', data: data.toString('base64'), length: data.length } },
    }),
  });
  if (!response.ok) throw new Error(`publishing ${tarball} to the local registry: ${response.status} ${await response.text()}`);
}

let registry: Server | undefined;
let project = '';
let prefix = '';
let tarballs = '';
const installed: { line: string; file: string; result: Run }[] = [];
/** Kilobytes on disk: the README's first line in the empty project, the global CLI alone and with tsx. */
const sizes = { core: 0, cli: 0, cliTsx: 0 };
/** The global CLI before tsx and any provider or driver is installed: what it says. */
const peerless: Record<'tsx' | 'provider' | 'pglite', Run | undefined> = {
  tsx: undefined,
  provider: undefined,
  pglite: undefined,
};
/** publint's and attw's verdicts on each tarball. */
const checked = new Map<string, { publint: Run; attw: Run }>();
let tsc: Run;
/**
 * The newcomer's clone (`git clone`, `pnpm install`, `pnpm demo`): started with the packing, since it
 * needs neither the registry nor the installs, and awaited by its test; `{ error }` when a step failed.
 */
let newcomer: Promise<{ demo: Run } | { error: unknown }> = Promise.resolve({ error: 'not started' });

/** The README's set-up, run in a clone of the repository, then `pnpm demo` there. */
async function cloneAndDemo(): Promise<{ demo: Run }> {
  const [pnpmCommand, pnpmArgs] = pnpm();
  const clone = join(dir, 'clone');
  // The npm settings of the installs below (no registry: a clone installs from the lockfile), and
  // not the npm_config_* that `pnpm test` passes down.
  const npmrc = join(dir, 'clone-npmrc');
  writeFileSync(npmrc, 'fund=false\naudit=false\nprefer-offline=true\nupdate-notifier=false\n');
  const cloneEnv: NodeJS.ProcessEnv = { ...process.env, NPM_CONFIG_USERCONFIG: npmrc, npm_config_loglevel: 'error' };
  for (const key of Object.keys(cloneEnv)) if (/^npm_config_(?!loglevel)/i.test(key)) delete cloneEnv[key];
  await ok('git', ['clone', '--quiet', REPO, clone], dir, cloneEnv);
  await ok(pnpmCommand, [...pnpmArgs, 'install'], clone, cloneEnv);
  return { demo: await ok(pnpmCommand, [...pnpmArgs, 'demo'], clone, cloneEnv) };
}

beforeAll(async () => {
  const missing = PUBLISHED.filter((name) => !existsSync(join(REPO, 'packages', name, 'dist', 'index.js')));
  if (missing.length > 0)
    throw new Error(`packages/{${missing.join(',')}}/dist is missing: run \`pnpm build\` first (\`pnpm test\` does).`);
  const started = Date.now();
  const phases: Record<string, number> = {};
  const phase = (name: string): void => {
    phases[name] = Math.round((Date.now() - started) / 1000);
  };
  dir = mkdtempSync(join(tmpdir(), 'turnkit-registry-'));
  tarballs = join(dir, 'tarballs');
  newcomer = cloneAndDemo().catch((error: unknown) => ({ error }));
  const [pnpmCommand, pnpmArgs] = pnpm();
  // One pnpm for all of them (`pnpm -r pack`, each package as `pnpm pack` in its folder packs it):
  // a pnpm process per package spent 19 s of CPU starting pnpm, one spends 2.5 s.
  const filters = PUBLISHED.flatMap((name) => ['--filter', `./packages/${name}`]);
  await ok(pnpmCommand, [...pnpmArgs, '--recursive', ...filters, 'pack', '--pack-destination', tarballs], REPO);

  mkdirSync(join(dir, 'registry'));
  phase('packed');
  const local = await startRegistry(join(dir, 'registry'));
  registry = local.server;
  const host = local.url.replace(/^http:/, '');
  const user = await fetch(`${local.url}-/user/org.couchdb.user:turnkit`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'turnkit', password: 'a-throwaway-password' }),
  });
  const { token } = (await user.json()) as { token: string };
  // Only the @turnkit scope comes from the local registry; the user's npm config is not read.
  const npmrc = join(dir, 'npmrc');
  writeFileSync(
    npmrc,
    `@turnkit:registry=${local.url}\n${host}:_authToken=${token}\nfund=false\naudit=false\nprefer-offline=true\nupdate-notifier=false\n`,
  );
  env = { ...process.env, NPM_CONFIG_USERCONFIG: npmrc, npm_config_loglevel: 'error' };
  for (const key of Object.keys(env)) if (/^npm_config_(?!loglevel)/i.test(key)) delete env[key];
  env.NPM_CONFIG_USERCONFIG = npmrc;
  await Promise.all(readdirSync(tarballs).map((file) => publish(local.url, token, join(tarballs, file))));
  phase('published');

  // publint and attw read the tarballs while npm installs (they need no network). attw runs once
  // for all of them (attw-all.mjs: the CLI's analysis, profile and exit code, TypeScript loaded once).
  const files = readdirSync(tarballs);
  const checks = Promise.all([
    Promise.all(files.map((file) => run(bin('publint'), ['--strict', join(tarballs, file)], REPO))),
    run(
      process.execPath,
      [fileURLToPath(new URL('./attw-all.mjs', import.meta.url)), 'esm-only', ...files.map((file) => join(tarballs, file))],
      REPO,
    ),
  ]).then(([publints, attwAll]) => {
    const verdicts =
      attwAll.code === 0
        ? (JSON.parse(attwAll.stdout) as { tarball: string; code: number; stdout: string; stderr?: string }[])
        : [];
    files.forEach((file, index) => {
      const verdict = verdicts.find((entry) => entry.tarball === join(tarballs, file));
      const attw: Run =
        verdict === undefined
          ? { ...attwAll, code: attwAll.code === 0 ? 1 : attwAll.code }
          : { code: verdict.code, stdout: verdict.stdout, stderr: verdict.stderr ?? '' };
      checked.set(file, { publint: publints[index] as Run, attw });
    });
  });

  project = join(dir, 'app');
  prefix = join(dir, 'global');
  mkdirSync(project);
  writeFileSync(join(project, 'package.json'), `${JSON.stringify({ name: 'app', private: true, type: 'module' }, null, 2)}\n`);
  // Each install line as written, one after another in the same project; the `-g` ones, one after
  // another into a prefix, at the same time (two npm processes, mostly waiting on the registries).
  const installAll = async (lines: typeof LINES): Promise<void> => {
    for (const { line, file } of lines) {
      const args = line.split(' ').slice(1);
      const global = args.includes('-g');
      const result = await run('npm', global ? [...args, '--prefix', prefix] : args, project);
      installed.push({ line, file, result });
      if (line === LINES[0]?.line) sizes.core = await kilobytes(join(project, 'node_modules'));
      if (line === 'npm i -g @turnkit/cli') {
        sizes.cli = await kilobytes(join(prefix, 'lib', 'node_modules'));
        const turnkit = join(prefix, 'bin', 'turnkit');
        writeFileSync(join(dir, 'scenario.ts'), 'export default { input: "hi" };\n');
        writeFileSync(join(dir, 'scenario.mjs'), 'export default { input: "hi" };\n');
        peerless.tsx = await run(turnkit, ['run', 'scenario.ts'], dir);
        peerless.provider = await run(turnkit, ['run', 'scenario.mjs', '--provider', 'openai', '--model', 'gpt-4.1-mini'], dir, {
          OPENAI_API_KEY: 'sk-not-used',
        });
        peerless.pglite = await run(turnkit, ['ls', '--store', 'memory://'], dir);
      }
      if (line === 'npm i -g @turnkit/cli tsx') sizes.cliTsx = await kilobytes(join(prefix, 'lib', 'node_modules'));
    }
  };
  const isGlobal = ({ line }: (typeof LINES)[number]): boolean => line.split(' ').includes('-g');
  await Promise.all([installAll(LINES.filter((entry) => !isGlobal(entry))), installAll(LINES.filter(isGlobal))]);
  phase('installed');
  await checks;
  testLog(`installed sizes (du -sk): ${JSON.stringify(sizes)}`);
  // What the samples below need beyond the install lines: an MCP server for the mcp README's sample.
  await ok('npm', ['i', '@modelcontextprotocol/server@^2'], project);

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
  copyFileSync(join(HERE, 'condition.mjs'), join(project, 'condition.mjs'));
  // The README's first agent ("Run a turn in-process") and each package README's sample, as a user would paste them.
  copyFileSync(join(REPO, 'packages', 'inline', 'examples', 'readme.ts'), join(project, 'first-agent.ts'));
  // @turnkit/dbos's sample is a sketch around the user's own agent and a DBOS database:
  // packages/dbos/test/docs.test.ts runs the full example of docs/durable-engines.md.
  for (const name of PUBLISHED.filter((n) => n !== 'dbos')) writeFileSync(join(project, `readme-${name}.ts`), readmeSample(name));
  // Emits out/*.js even when a type error is found, so the runs below still say what works.
  // The consumer's own `tsc`, as a user runs it (about 17 s of CPU: most of it checks the other
  // libraries' declarations, whose errors the test leaves out).
  tsc = await run(process.execPath, [join(REPO, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], project);
  phase('type-checked');
  testLog(`seconds since the start: ${JSON.stringify(phases)}`);
}, SETUP_TIMEOUT);

afterAll(async () => {
  // The clone must be done before its folder is removed (its test may have failed before awaiting it).
  await newcomer;
  await new Promise((resolve) => (registry === undefined ? resolve(undefined) : registry.close(resolve)));
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
});

describe('every published package, packed', () => {
  // attw's esm-only profile leaves out node10 and CommonJS resolution (`require()` is checked below).
  it.each(PUBLISHED)('@turnkit/%s passes publint (strict) and attw (profile esm-only)', (name) => {
    const file = [...checked.keys()].find((key) => key.startsWith(`turnkit-${name}-`)) ?? name;
    const { publint, attw } = checked.get(file) ?? { publint: undefined, attw: undefined };
    expect(`${publint?.stdout}${publint?.stderr}`).toContain('All good!');
    expect(publint?.code).toBe(0);
    const { problems } = (JSON.parse(attw?.stdout ?? '{}') as { analysis: { problems: { resolutionKind?: string }[] } }).analysis;
    expect(problems.filter((problem) => !['node10', 'node16-cjs'].includes(problem.resolutionKind ?? ''))).toEqual([]);
    expect(attw?.code).toBe(0);
  });

  it('ship dist, README.md and LICENSE, no sources, and no @turnkit/source condition', () => {
    for (const name of PUBLISHED) {
      const root = join(project, 'node_modules', '@turnkit', name);
      const files = readdirSync(root);
      expect(files, name).toContain('dist');
      expect(files, name).toContain('README.md');
      expect(files, name).toContain('LICENSE');
      expect(files, name).not.toContain('src');
      const packed = readFileSync(join(root, 'package.json'), 'utf8');
      expect(JSON.stringify((JSON.parse(packed) as { exports: unknown }).exports), name).not.toContain('@turnkit/source');
      expect(packed, name).not.toContain('workspace:');
    }
  });

  it("export in the registry what the repository's exports give, minus the @turnkit/source condition", () => {
    const strip = (value: unknown): unknown =>
      typeof value === 'object' && value !== null
        ? Object.fromEntries(
            Object.entries(value)
              .filter(([key]) => key !== '@turnkit/source')
              .map(([key, entry]) => [key, strip(entry)]),
          )
        : value;
    for (const name of PUBLISHED) {
      const source = JSON.parse(readFileSync(join(REPO, 'packages', name, 'package.json'), 'utf8')) as { exports: unknown };
      const packed = JSON.parse(readFileSync(join(project, 'node_modules', '@turnkit', name, 'package.json'), 'utf8')) as {
        exports: unknown;
      };
      expect(packed.exports, name).toEqual(strip(source.exports));
    }
  });
});

describe('the install lines of the README and the docs, by name from the registry', () => {
  it('are found (the README first) and include a global install of the CLI', () => {
    expect(LINES[0]?.file).toBe('README.md');
    expect(LINES.map(({ line }) => line)).toEqual(expect.arrayContaining(['npm i -g @turnkit/cli', 'npm i -g @turnkit/cli tsx']));
  });

  it.each(LINES.map(({ line, file }) => [line, file]))('`%s` (%s) installs', (line) => {
    const result = installed.find((entry) => entry.line === line)?.result;
    expect(result?.stderr).toBe('');
    expect(result?.code).toBe(0);
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

  // The server's sample opens Postgres; the console test runs it (packages/server/test). The DBOS
  // adapter's needs a DBOS database: packages/dbos/test/docs.test.ts runs its doc's example.
  it.each(PUBLISHED.filter((name) => name !== 'cli' && name !== 'server' && name !== 'dbos'))(
    "run the sample of @turnkit/%s's README",
    async (name) => {
      const sample = await run(process.execPath, [`out/readme-${name}.js`], project, { OPENAI_API_KEY: '' });
      expect(sample.stderr).toBe('');
      expect(sample.code).toBe(0);
    },
  );

  it('load the build under --conditions=source (the repository condition is @turnkit/source)', async () => {
    const { stdout } = await ok(process.execPath, ['--conditions=source', 'condition.mjs'], project);
    expect(stdout).toBe('function\n');
  });

  it('can be required from CommonJS (Node >= 20.19 requires ES modules without top-level await)', async () => {
    const { stdout } = await ok(process.execPath, ['require-all.cjs', ...PUBLISHED], project);
    const loaded = { loaded: true };
    expect(JSON.parse(stdout)).toEqual(Object.fromEntries(PUBLISHED.map((name) => [name, loaded])));
  });
});

describe('the turnkit binary, installed by name', () => {
  const turnkit = (): string => join(prefix, 'bin', 'turnkit');
  const local = (): string => join(project, 'node_modules', '.bin', 'turnkit');

  it('without tsx, a provider or PGlite (optional peers), says which to install (exit 2)', () => {
    expect(peerless.tsx?.stderr).toContain("needs the package 'tsx', which is not installed");
    expect(peerless.tsx?.stderr).toContain('npm install tsx');
    expect(peerless.provider?.stderr).toContain('npm install @ai-sdk/openai');
    expect(peerless.pglite?.stderr).toContain('npm install @electric-sql/pglite');
    for (const result of Object.values(peerless)) {
      expect(result?.code).toBe(2);
      expect(result?.stderr.trimEnd().split('\n')).toHaveLength(1);
    }
  });

  it('weighs less than before its providers, PGlite and tsx became optional peers', () => {
    // Measured before (docs/installing.md): 75,280 kB for the CLI; now it must stay well below.
    expect(sizes.cli).toBeGreaterThan(0);
    expect(sizes.cli).toBeLessThan(75_280);
  });

  const PATHS = /(?:[\w.@-]+\/)+[\w.-]+\.(?:ts|mts|js|mjs|json|ndjson)\b/g;

  it('--help of every command mentions only files the CLI package ships, and its example runs', async () => {
    const helps = await Promise.all(
      [[], ['run'], ['resume'], ['replay'], ['graph'], ['check']].map((command) => ok(local(), [...command, '--help'], project)),
    );
    const text = helps.map((help) => help.stdout).join('\n');
    expect(text).not.toContain('packages/');
    const mentioned = [...new Set(text.match(PATHS) ?? [])];
    const example = mentioned.find((path) => path.endsWith('node_modules/@turnkit/cli/examples/trip-planner.ts'));
    expect(example, text).toBeDefined();
    for (const path of mentioned) expect(existsSync(join(project, path)), `${path} (mentioned in --help)`).toBe(true);
    const ran = await run(local(), ['run', example ?? ''], project);
    expect(ran.stderr).toBe('');
    expect(ran.code).toBe(0);
    expect(ran.stdout).toContain('stopped: completed');
  });

  it('runs the scenario of its README', async () => {
    const scenario = await run(turnkit(), ['run', 'readme-cli.ts'], project);
    expect(scenario.stderr).toBe('');
    expect(scenario.stdout).toContain('stopped: completed');
    expect(scenario.code).toBe(0);
  });

  it('a usage error is one line on stderr, exit code 2, naming only the user file', async () => {
    const missing = await run(turnkit(), ['run', 'no-such-scenario.ts'], project);
    expect(missing.code).toBe(2);
    expect(missing.stdout).toBe('');
    expect(missing.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(missing.stderr).toContain('no-such-scenario.ts');
    expect(missing.stderr.match(PATHS) ?? []).toEqual([]);
  });

  it('serve, without its optional peers installed, says what to install (exit 2)', async () => {
    const serve = await run(turnkit(), ['serve', '--port', '0'], dir);
    expect(serve.code).toBe(2);
    expect(serve.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(serve.stderr).toContain('npm i @turnkit/server @turnkit/store');
  });

  it('depends on the other packages by caret ranges (workspace:^ when packed)', () => {
    const pkg = JSON.parse(readFileSync(join(prefix, 'lib', 'node_modules', '@turnkit', 'cli', 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    expect(pkg.dependencies['@turnkit/core']).toBe('^0.1.0');
  });
});

// The newcomer's path, one step after another: the repository cloned, the README's set-up and
// `pnpm demo`; then a project of one's own with the packages installed by name (above), where
// `turnkit dev` holds a store, a turn run from a second process parks for a person, a third
// process approves and rejects its calls through the CLI, and the turn finishes.
describe("the newcomer's path", () => {
  it(
    "a clone of the repository: the README's set-up, then `pnpm demo`",
    async () => {
      const readme = readFileSync(join(REPO, 'README.md'), 'utf8');
      const setup =
        readme
          .match(/## Set-up[\s\S]*?```sh\n([\s\S]*?)```/)?.[1]
          ?.trim()
          .split('\n') ?? [];
      const manifest = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { packageManager: string };
      // The pnpm this test runs under is the one the set-up's first line installs.
      expect(setup).toEqual([`npm i -g ${manifest.packageManager}`, 'pnpm install']);
      const [pnpmCommand, pnpmArgs] = pnpm();
      expect((await ok(pnpmCommand, [...pnpmArgs, '--version'], REPO)).stdout.trim()).toBe(manifest.packageManager.split('@')[1]);
      // The clone, its install and the demo ran while the packages were packed and installed (beforeAll).
      const cloned = await newcomer;
      if ('error' in cloned) throw cloned.error;
      expect(cloned.demo.stdout).toContain('stopped: completed');
    },
    SETUP_TIMEOUT,
  );

  it(
    'a project of its own: turnkit dev holds the store, a turn parks, another process decides it, the turn finishes',
    async () => {
      const bin = join(project, 'node_modules', '@turnkit', 'cli', 'dist', 'bin.js');
      const agents = join('node_modules', '@turnkit', 'cli', 'examples', 'delete-files.ts');
      const cli = (...args: string[]): Promise<Run> => run(process.execPath, [...CLI_NODE_OPTIONS, bin, ...args], project);
      const dev = await startDev(bin, ['--agents', agents, '--store', 'store', '--port', '0'], project);
      try {
        const parked = await cli('run', agents, '--store', 'store');
        expect([parked.code, parked.stderr]).toEqual([3, '']);
        const id = /^stored turn (turn_\S+) in /m.exec(parked.stdout)?.[1] ?? 'no turn id printed';
        expect(parked.stdout).toContain(`turn ${id} · agent delete-files · awaiting_approval`);
        expect(parked.stdout).toContain(`turnkit dev (process ${dev.pid}) continues the turn`);
        const watching = cli('watch', id, '--store', 'store');
        expect((await cli('approve', id, 'call_2', '--store', 'store')).code).toBe(0);
        expect((await cli('reject', id, 'call_3', '--reason', 'keep it', '--store', 'store')).code).toBe(0);
        const watched = await watching;
        expect(watched.code, watched.stderr).toBe(0);
        expect(watched.stdout).toContain('tool call_2 delete_file: ok {"deleted":"tmp/build.log"}');
        expect(watched.stdout.trimEnd().split('\n').slice(-1)).toEqual([`→ turn ${id} is stopped`]);
      } finally {
        const stopped = await dev.stop();
        expect(stopped.code, stopped.stderr).toBe(0);
      }
    },
    SETUP_TIMEOUT,
  );
});
