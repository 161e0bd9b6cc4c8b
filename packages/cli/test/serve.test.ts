// `turnkit serve` as a user runs it: the built binary, a real port on 127.0.0.1, stopped by SIGTERM.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TOKEN_ENV } from '@turnkit/server';
import { describe, expect, it } from 'vitest';
import { BIN, CLI_NODE_OPTIONS, REPO, turnkit } from './run-cli.js';

interface Served {
  readonly url: string;
  readonly stdout: string;
  /** Sends SIGTERM and resolves to the exit code. */
  stop(): Promise<number | null>;
}

/** Starts `turnkit serve …args` and resolves once it prints its URL. */
function startServe(args: readonly string[], env: Record<string, string | undefined> = {}): Promise<Served> {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: build the CLI first with \`pnpm --filter @turnkit/cli... build\`.`);
  const fullEnv: Record<string, string | undefined> = { ...process.env, NO_COLOR: '1', ...env };
  for (const [key, value] of Object.entries(fullEnv)) if (value === undefined) delete fullEnv[key];
  const child = spawn(process.execPath, [...CLI_NODE_OPTIONS, BIN, 'serve', ...args], {
    cwd: REPO,
    env: fullEnv,
    timeout: 50_000,
  });
  let stdout = '';
  let stderr = '';
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
      const url = /console (http:\/\/\S+)\/console/.exec(stdout)?.[1];
      if (url !== undefined && /\ntoken/.test(stdout) && /\n$/.test(stdout))
        resolve({ url, stdout, stop: () => (child.kill('SIGTERM'), exited) });
    });
    void exited.then((code) => reject(new Error(`turnkit serve exited with ${code} before serving: ${stderr}`)));
  });
}

describe('turnkit serve', () => {
  it('generates a token on first start, prints it once, and serves the API and the console on 127.0.0.1', async () => {
    const tokenFile = join(await mkdtemp(join(tmpdir(), 'turnkit-serve-')), 'token');
    const env = { TURNKIT_SERVER_TOKEN: undefined };
    const first = await startServe(['--store', 'memory://', '--port', '0', '--token-file', tokenFile], env);
    const token = /token \(shown this once[^\n]*\n {2}(\S+)\n/.exec(first.stdout)?.[1] ?? '';
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(first.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const auth = { authorization: `Bearer ${token}` };
    expect((await fetch(`${first.url}/api/turns`, { headers: auth })).status).toBe(200);
    expect((await fetch(`${first.url}/api/turns`)).status).toBe(401);
    expect((await fetch(`${first.url}/console/login`)).status).toBe(200);
    expect(await first.stop()).toBe(0);

    const second = await startServe(['--store', 'memory://', '--port', '0', '--token-file', tokenFile], env);
    expect(second.stdout).not.toContain(token);
    expect(second.stdout).toContain('token: the one made on first start');
    expect((await fetch(`${second.url}/api/turns`, { headers: auth })).status).toBe(200);
    expect(await second.stop()).toBe(0);
  });

  it(`takes the token from TURNKIT_SERVER_TOKEN and never prints it`, async () => {
    const token = 'env-token-0123456789-abcdefghijklmnop';
    const served = await startServe(['--store', 'memory://', '--port', '0'], { TURNKIT_SERVER_TOKEN: token });
    expect(served.stdout).toContain('token: from TURNKIT_SERVER_TOKEN');
    expect(served.stdout).not.toContain(token);
    const submitted = await fetch(`${served.url}/api/turns`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ agent: 'support', input: 'hello' }),
    });
    expect(submitted.status).toBe(201);
    expect(await served.stop()).toBe(0);
  });
});

describe('turnkit serve: help and bad flags', () => {
  it('--help shows usage, examples and where the token comes from (exit 0)', async () => {
    const run = await turnkit(['serve', '--help']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Usage: turnkit serve');
    expect(run.stdout).toMatch(/Examples?:\n {2}\$ turnkit serve/);
    expect(run.stdout).toContain(TOKEN_ENV);
  });

  it.each([
    [['--port', '99999'], /Expected a port from 0 to 65535/],
    [['--store', 'mysql://x'], /does not know the URL scheme/],
  ])('turnkit serve %s: one line on stderr, exit 2', async (args, message) => {
    const run = await turnkit(['serve', ...args], { env: { TURNKIT_SERVER_TOKEN: 'env-token-0123456789-abcdefghijklmnop' } });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(message);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
  });
});
