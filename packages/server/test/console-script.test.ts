// `pnpm console` as a user runs it: the root script's command, stopped by SIGTERM.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));

describe('pnpm console', () => {
  it('starts a worker and the console on demo turns, and prints the URL and the token', async () => {
    const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as {
      scripts: Record<string, string>;
    };
    expect(pkg.scripts.console).toBe('tsx --conditions=@turnkit/source packages/server/examples/console.ts');
    const tsx = fileURLToPath(new URL('../../../node_modules/.bin/tsx', import.meta.url));
    const child = spawn(tsx, ['--conditions=@turnkit/source', 'packages/server/examples/console.ts'], {
      cwd: REPO,
      env: { ...process.env, PORT: '0', TURNKIT_SERVER_TOKEN: '' },
      timeout: 50_000,
    });
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    let stdout = '';
    const printed = new Promise<void>((resolve) =>
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString('utf8');
        if (stdout.includes('Ctrl-C stops it.')) resolve();
      }),
    );
    await Promise.race([printed, exited]);
    const url = /console: (http:\/\/127\.0\.0\.1:\d+)\/console\n/.exec(stdout)?.[1];
    const token = /token \(paste it to sign in\): (\S+)\n/.exec(stdout)?.[1];
    expect(url).toBeDefined();
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const list = (await (await fetch(`${url}/api/turns`, { headers: { authorization: `Bearer ${token}` } })).json()) as {
      turns: { status: string }[];
    };
    expect(list.turns.map((t) => t.status).sort()).toEqual(['awaiting_approval', 'awaiting_approval', 'failed', 'stopped']);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
});
