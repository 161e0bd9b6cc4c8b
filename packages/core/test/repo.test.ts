// The repository's set-up and packaging, as a new user meets them: the README's set-up command
// installs exactly the pnpm package.json pins and CI runs that very command; every published
// package carries what a registry user needs; tests print only when asked.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { longestTests, projects, slowTests } from '../../../vitest.workspace.ts';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const read = (path: string): string => readFileSync(join(REPO, path), 'utf8');
const root = JSON.parse(read('package.json')) as { packageManager: string; scripts: Record<string, string> };
const pinned = root.packageManager.replace(/^pnpm@/, '');

interface PackageJson {
  name: string;
  private?: boolean;
  license?: string;
  keywords?: string[];
  homepage?: string;
  bugs?: { url?: string };
  repository?: { type?: string; url?: string; directory?: string };
  publishConfig?: { access?: string; exports?: Record<string, unknown> };
  files?: string[];
  exports?: Record<string, unknown>;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}
const packages = readdirSync(join(REPO, 'packages')).filter((dir) => existsSync(join(REPO, 'packages', dir, 'package.json')));
const manifest = (dir: string): PackageJson => JSON.parse(read(`packages/${dir}/package.json`)) as PackageJson;
const published = packages.filter((dir) => manifest(dir).private !== true);

/** The commands of the ```sh block under the README's "## Set-up". */
function setupCommands(): string[] {
  const section = read('README.md').split('## Set-up\n')[1] ?? '';
  const block = section.match(/```sh\n([\s\S]*?)```/)?.[1] ?? '';
  return block
    .split('\n')
    .map((line) => line.replace(/#.*$/, '').trim())
    .filter((line) => line !== '');
}

describe('set-up as the README says', () => {
  it("installs exactly the pnpm that package.json's packageManager pins", () => {
    expect(pinned).toMatch(/^\d+\.\d+\.\d+$/);
    expect(setupCommands()).toEqual([`npm i -g pnpm@${pinned}`, 'pnpm install']);
  });

  it("CI (.ci/run) runs the README's pnpm install command verbatim, only when pnpm is missing or another version", () => {
    const ci = read('.ci/run');
    const command = setupCommands()[0] ?? '';
    expect(ci.split('\n').map((line) => line.trim())).toContain(command);
    expect(ci).toMatch(/if \[ "\$\(pnpm --version 2>\/dev\/null \|\| true\)" != "\$PNPM_VERSION" \]; then/);
    expect(ci).toContain('pnpm install --frozen-lockfile');
    expect(ci).toContain('\npnpm test\n');
  });

  it('a different pnpm 10 does not try to switch to the pinned one (managePackageManagerVersions: false)', () => {
    expect(read('pnpm-workspace.yaml')).toMatch(/^managePackageManagerVersions: false$/m);
  });

  it('`pnpm turnkit …` runs the CLI from the sources, as docs/cli.md says in its first lines', () => {
    expect(root.scripts.turnkit).toBe('tsx --conditions=@turnkit/source packages/cli/src/bin.ts');
    expect(root.scripts.demo).toContain('tsx --conditions=@turnkit/source packages/cli/src/bin.ts run ');
    expect(read('docs/cli.md').split('\n').slice(0, 6).join('\n')).toContain('`pnpm turnkit …`');
  });
});

describe('every published package', () => {
  it('is the expected set', () => {
    expect(published.sort()).toEqual([
      'ai-sdk',
      'check',
      'cli',
      'core',
      'dbos',
      'dispatch',
      'inline',
      'mcp',
      'otel',
      'server',
      'store',
      'stream',
      'testing',
    ]);
  });

  it.each(published)('%s: license, repository, homepage, bugs, keywords, public access, README', (dir) => {
    const pkg = manifest(dir);
    expect(pkg.license).toBe('MIT');
    expect(pkg.repository).toEqual({
      type: 'git',
      url: 'git+https://github.com/turnkit/turnkit.git',
      directory: `packages/${dir}`,
    });
    expect(pkg.homepage).toBe(`https://github.com/turnkit/turnkit/tree/main/packages/${dir}#readme`);
    expect(pkg.bugs).toEqual({ url: 'https://github.com/turnkit/turnkit/issues' });
    expect(pkg.keywords?.length).toBeGreaterThan(0);
    // Published without the repository's @turnkit/source condition (docs/installing.md).
    const strip = (value: unknown): unknown =>
      typeof value === 'object' && value !== null
        ? Object.fromEntries(
            Object.entries(value)
              .filter(([key]) => key !== '@turnkit/source')
              .map(([key, entry]) => [key, strip(entry)]),
          )
        : value;
    expect(pkg.publishConfig).toEqual({ access: 'public', exports: strip(pkg.exports) });
    expect(read(`packages/${dir}/README.md`)).toMatch(/^# @turnkit\//);
    expect(pkg.files).not.toContain('src');
  });

  it.each(packages)('%s: the source condition is @turnkit/source, and @turnkit dependencies are workspace:^', (dir) => {
    const pkg = manifest(dir);
    // A private tool (bench) has no library face: no exports at all.
    if (pkg.exports === undefined) expect(pkg.private, `${dir} has no exports`).toBe(true);
    else {
      const entry = pkg.exports['.'] as Record<string, string>;
      expect(entry['@turnkit/source']).toBe('./src/index.ts');
      expect(entry.default).toBe('./dist/index.js');
      // Every entry point: the repository's condition first (so TypeScript's customConditions, vitest
      // and tsx all reach the sources), then the declarations and the build a user gets.
      for (const [subpath, target] of Object.entries(pkg.exports)) {
        if (subpath === './package.json') continue;
        const name = subpath === '.' ? 'index' : subpath.slice(2);
        expect(target, `${dir} ${subpath}`).toEqual({
          '@turnkit/source': `./src/${name}.ts`,
          types: `./dist/${name}.d.ts`,
          default: `./dist/${name}.js`,
        });
        expect(Object.keys(target as object), `${dir} ${subpath}`).toEqual(['@turnkit/source', 'types', 'default']);
      }
    }
    for (const deps of [pkg.dependencies, pkg.devDependencies]) {
      for (const [name, range] of Object.entries(deps ?? {}))
        if (name.startsWith('@turnkit/')) expect(range, `${dir} → ${name}`).toBe('workspace:^');
    }
  });

  it('take zod, fast-check, the AI SDK provider, OpenTelemetry and the MCP client as peers (and test with them as dev dependencies)', () => {
    const peers = Object.fromEntries(packages.map((dir) => [dir, manifest(dir).peerDependencies ?? {}]));
    for (const dir of ['dispatch', 'inline', 'stream', 'testing', 'cli', 'mcp'])
      expect(peers[dir], dir).toMatchObject({ zod: '^4' });
    expect(peers.check).toEqual({ 'fast-check': '^4' });
    expect(peers['ai-sdk']).toEqual({ '@ai-sdk/provider': '^3' });
    expect(peers.otel).toEqual({ '@opentelemetry/api': '^1.9' });
    expect(peers.mcp).toEqual({ '@modelcontextprotocol/client': '^2', zod: '^4' });
    for (const dir of packages) {
      for (const peer of Object.keys(peers[dir] ?? {})) {
        // An optional turnkit peer (the CLI's @turnkit/mcp, @turnkit/server, @turnkit/store) is tested from the workspace.
        const range = peer.startsWith('@turnkit/') ? 'workspace:^' : 'catalog:';
        if (peer !== 'vitest') expect(manifest(dir).devDependencies?.[peer], `${dir} devDependencies.${peer}`).toBe(range);
        expect(manifest(dir).dependencies ?? {}, `${dir} dependencies`).not.toHaveProperty(peer);
      }
    }
  });

  it('no script or config asks for the bare `source` condition', () => {
    for (const file of [
      'package.json',
      '.ci/run',
      'vitest.config.ts',
      'vitest.workspace.ts',
      'tsconfig.json',
      'tsconfig.base.json',
    ]) {
      expect(read(file), file).not.toMatch(/conditions[= ]source\b|['"]source['"]/);
    }
  });
});

describe('test output', () => {
  const testFiles = packages.flatMap((dir) =>
    readdirSync(join(REPO, 'packages', dir, 'test'), { recursive: true, encoding: 'utf8' })
      // fixtures/ and consumer/ hold programs that tests run as child processes and read the output of.
      .filter((file) => file.endsWith('.ts') && !file.startsWith('fixtures') && !file.startsWith('consumer'))
      .map((file) => `packages/${dir}/test/${file}`),
  );

  it('tests print through test-log.ts (TURNKIT_TEST_VERBOSE=1), never with console or stdout directly', () => {
    expect(testFiles.length).toBeGreaterThan(50);
    const printing = testFiles.filter((file) =>
      /\bconsole\.(log|info|table|dir|debug)\s*\(|process\.stdout\.write\s*\(/.test(read(file)),
    );
    expect(printing).toEqual([]);
  });
});

describe('the unit and slow test projects (vitest.workspace.ts)', () => {
  const testFiles = packages.flatMap((dir) =>
    readdirSync(join(REPO, 'packages', dir, 'test'), { recursive: true, encoding: 'utf8' })
      .filter((file) => file.endsWith('.test.ts'))
      .map((file) => `packages/${dir}/test/${file}`),
  );
  /** A test file and the test helpers it imports (relative imports inside test/, followed). */
  function withHelpers(file: string, seen = new Set<string>()): string[] {
    if (seen.has(file) || !existsSync(join(REPO, file))) return [];
    seen.add(file);
    for (const [, path] of read(file).matchAll(/from '(\.{1,2}\/[^']+)'/g)) {
      const helper = join(file, '..', (path as string).replace(/\.js$/, '.ts'));
      if (helper.includes('/test/')) withHelpers(helper, seen);
    }
    return [...seen];
  }
  const SLOW = /node:child_process|POSTGRES_URL|playwright|chromium|'pack'/;

  it('every slow file exists, and the two projects split the test files', () => {
    for (const file of Object.keys(slowTests)) expect(testFiles, file).toContain(file);
    // The files started first (vitest.config.ts) exist too: a renamed one would lose its place.
    for (const file of Object.keys(longestTests)) expect(testFiles, file).toContain(file);
    expect(projects.map((project) => project.test.name)).toEqual(['unit', 'slow']);
  });

  it('a unit test starts no process, opens no Postgres or browser and packs nothing (else it is listed as slow)', () => {
    // (This file names the patterns, and is a unit test.)
    const unit = testFiles.filter((file) => !(file in slowTests) && file !== 'packages/core/test/repo.test.ts');
    expect(unit.length).toBeGreaterThan(100);
    const offending = unit.filter((file) => withHelpers(file).some((each) => SLOW.test(read(each))));
    expect(offending).toEqual([]);
  });
});
