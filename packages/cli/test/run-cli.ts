// Runs the BUILT binary (packages/cli/dist/bin.js) as a child process, the way a user does.
// `pnpm test` builds every package first; alone: `pnpm --filter @turnkit/cli... build`.
import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSync } from 'esbuild';

export const BIN = fileURLToPath(new URL('../dist/bin.js', import.meta.url));
export const EXAMPLES = fileURLToPath(new URL('../examples/', import.meta.url));
export const REPO = fileURLToPath(new URL('../../../', import.meta.url));

/**
 * Node options of the CLI processes these tests start: V8 compiles PGlite's WebAssembly with its
 * baseline compiler only. A command that opens a PGlite store and exits spends about as much CPU
 * recompiling PGlite's hot functions as it saves by running them optimized (`turnkit ls` on a
 * PGlite store: 2.2 s of CPU instead of 3.2 s). Only the speed of the WebAssembly changes.
 */
export const CLI_NODE_OPTIONS: readonly string[] = ['--liftoff-only'];

export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `turnkit ...args`; never rejects (a non-zero exit is part of the result). */
export function turnkit(
  args: readonly string[],
  options: { cwd?: string; env?: Record<string, string | undefined> } = {},
): Promise<CliRun> {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: build the CLI first with \`pnpm --filter @turnkit/cli... build\`.`);
  const env: Record<string, string | undefined> = { ...process.env, NO_COLOR: '1', ...options.env };
  for (const [key, value] of Object.entries(env)) if (value === undefined) delete env[key];
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [...CLI_NODE_OPTIONS, BIN, ...args],
      { cwd: options.cwd ?? REPO, env, timeout: 50_000, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

export const example = (name: string): string => `${EXAMPLES}${name}`;

/**
 * Runs `turnkit ...args` and sends `signal` to it once its stderr contains `after`. Never rejects;
 * the process is killed if it is still running after 50 s.
 */
export function turnkitSignalled(
  args: readonly string[],
  signal: NodeJS.Signals,
  after: string,
  options: { cwd?: string } = {},
): Promise<CliRun> {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: build the CLI first with \`pnpm --filter @turnkit/cli... build\`.`);
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...CLI_NODE_OPTIONS, BIN, ...args], {
      cwd: options.cwd ?? REPO,
      env: { ...process.env, NO_COLOR: '1' },
      timeout: 50_000,
    });
    let stdout = '';
    let stderr = '';
    let sent = false;
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
      if (!sent && stderr.includes(after)) {
        sent = true;
        child.kill(signal);
      }
    });
    child.on('error', (error) => resolve({ code: -1, stdout, stderr: `${stderr}could not start turnkit: ${error.message}` }));
    child.on('close', (code, killedBy) =>
      resolve({ code: code ?? -1, stdout, stderr: killedBy === null ? stderr : `${stderr}(ended by ${killedBy})` }),
    );
  });
}

/**
 * Runs `turnkit ...args` on a pseudo-terminal (util-linux `script`), so stdin and stdout are TTYs
 * and approvals prompt. `answer` sees the output so far each time more arrives and returns what to
 * type (or null for nothing yet, 'EOF' to close stdin). Never rejects.
 */
export function turnkitOnTty(
  args: readonly string[],
  answer: (output: string) => string | null,
  options: { cwd?: string } = {},
): Promise<CliRun> {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: build the CLI first with \`pnpm --filter @turnkit/cli... build\`.`);
  const quote = (s: string): string => `'${s.replace(/'/g, "'\\''")}'`;
  const command = [process.execPath, BIN, ...args].map(quote).join(' ');
  return new Promise((resolve) => {
    // -e: script exits with the child's code; -f: flush output at once (the test reacts to it).
    const child = spawn('script', ['-qfec', command, '/dev/null'], {
      cwd: options.cwd ?? REPO,
      env: { ...process.env, NO_COLOR: '1', TERM: 'dumb' },
      timeout: 50_000,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
      const keys = answer(stdout);
      if (keys === 'EOF') child.stdin.end();
      else if (keys !== null) child.stdin.write(keys);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    // A missing `script` binary must fail the test at once, not hang until the timeout.
    child.on('error', (error) => resolve({ code: -1, stdout, stderr: `${stderr}could not start script: ${error.message}` }));
    child.on('close', (code) => resolve({ code: code ?? -1, stdout: stdout.replace(/\r\n/g, '\n'), stderr }));
  });
}

/** A long-running `turnkit` child (such as `turnkit worker`): started, waited for until its stderr says `ready`. */
export interface CliChild {
  readonly pid: number | undefined;
  /** Everything it wrote to stderr so far. */
  stderr(): string;
  /** Sends SIGTERM and resolves to its exit code. */
  stop(): Promise<number | null>;
}

export async function turnkitChild(args: readonly string[], options: { cwd: string; ready: string }): Promise<CliChild> {
  const child = spawn(process.execPath, [...CLI_NODE_OPTIONS, BIN, ...args], {
    cwd: options.cwd,
    env: { ...process.env, NO_COLOR: '1' },
  });
  let stderr = '';
  await new Promise<void>((resolve) => {
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
      if (stderr.includes(options.ready)) resolve();
    });
    child.once('exit', () => resolve());
  });
  return {
    pid: child.pid,
    stderr: () => stderr,
    stop: () => {
      child.kill('SIGTERM');
      return new Promise((resolve) => (child.exitCode === null ? child.once('exit', resolve) : resolve(child.exitCode)));
    },
  };
}

/** A running `turnkit dev`: its process, the console's address and the token to sign in with. */
export interface DevChild {
  readonly pid: number;
  readonly url: string;
  readonly token: string;
  stop(): Promise<{ code: number | null; stderr: string }>;
}

/** Starts `turnkit dev …args` (the binary `bin`, a script run by node) and waits until it prints that it is ready (or exits). */
export function startDev(bin: string, args: readonly string[], cwd: string): Promise<DevChild> {
  const child = spawn(process.execPath, [...CLI_NODE_OPTIONS, bin, 'dev', ...args], {
    cwd,
    env: { ...process.env, NO_COLOR: '1' },
  });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
      if (!stdout.includes('Ctrl+C stops it.')) return;
      const url = /^turnkit dev: console (http:\/\/127\.0\.0\.1:\d+)\/console · API /m.exec(stdout)?.[1];
      const token = /^token \(paste it to sign in\): (\S+)$/m.exec(stdout)?.[1];
      if (url === undefined || token === undefined || child.pid === undefined) return reject(new Error(stdout));
      resolve({
        pid: child.pid,
        url,
        token,
        stop: () => {
          child.kill('SIGTERM');
          return new Promise((done) =>
            child.exitCode === null
              ? child.once('exit', (code) => done({ code, stderr }))
              : done({ code: child.exitCode, stderr }),
          );
        },
      });
    });
    child.once('exit', (code) => reject(new Error(`turnkit dev exited ${code}: ${stdout}${stderr}`)));
  });
}

const builtFixtures = new Map<string, string>();

/**
 * A TypeScript fixture (scenario or agents file) as a plain ES module, built once per test file
 * with esbuild, for tests about what the CLI does with a scenario rather than about loading
 * TypeScript: the CLI imports a .mjs with Node's import(), where a .mts costs every process about a
 * second of CPU more (tsx's loader thread, esbuild, and the packages loaded a second time in tsx's
 * namespace). Relative imports are bundled; packages stay imports and resolve to their builds from
 * packages/cli/node_modules. The file keeps the fixture's name (a stored agent is named after it)
 * in a folder named by its content, so test files running at once share one build.
 */
export function builtFixture(entry: string): string {
  const known = builtFixtures.get(entry);
  if (known !== undefined) return known;
  const { outputFiles } = buildSync({
    entryPoints: [entry],
    bundle: true,
    packages: 'external',
    format: 'esm',
    platform: 'node',
    target: 'node20',
    logLevel: 'error',
    write: false,
  });
  const code = outputFiles[0]?.contents ?? new Uint8Array();
  const hash = createHash('sha256').update(code).digest('hex').slice(0, 16);
  const outDir = fileURLToPath(new URL(`../node_modules/.cache/turnkit-fixtures/${hash}/`, import.meta.url));
  const outfile = join(outDir, basename(entry).replace(/\.[cm]?ts$/, '.mjs'));
  if (!existsSync(outfile)) {
    mkdirSync(outDir, { recursive: true });
    const partial = `${outfile}.${process.pid}`;
    writeFileSync(partial, code);
    renameSync(partial, outfile);
  }
  builtFixtures.set(entry, outfile);
  return outfile;
}
