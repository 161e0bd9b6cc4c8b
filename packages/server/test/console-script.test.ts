// `pnpm console` as a user runs it: the root script's command (`turnkit dev` on the CLI's examples),
// on a store of its own, stopped by SIGTERM.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const SCRIPT =
  'tsx --conditions=@turnkit/source packages/cli/src/bin.ts dev --agents packages/cli/examples/delete-files.ts packages/cli/examples/trip-planner.ts packages/cli/examples/extract-invoice.ts packages/cli/examples/order-status.json';

describe('pnpm console', () => {
  it('is turnkit dev on the examples: prints the URL and the token, runs their turns, stops on SIGTERM', async () => {
    const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as {
      scripts: Record<string, string>;
    };
    expect(pkg.scripts.console).toBe(SCRIPT);
    const store = join(await mkdtemp(join(tmpdir(), 'turnkit-console-')), 'store');
    const tsx = fileURLToPath(new URL('../../../node_modules/.bin/tsx', import.meta.url));
    const child = spawn(tsx, [...SCRIPT.split(' ').slice(1), '--store', store, '--port', '0'], {
      cwd: REPO,
      env: { ...process.env, TURNKIT_SERVER_TOKEN: '' },
      timeout: 120_000,
    });
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    let stdout = '';
    const printed = new Promise<void>((resolve) =>
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString('utf8');
        if (stdout.includes('Ctrl+C stops it.')) resolve();
      }),
    );
    await Promise.race([printed, exited]);
    const url = /^turnkit dev: console (http:\/\/127\.0\.0\.1:\d+)\/console · API /m.exec(stdout)?.[1];
    const token = /^token \(paste it to sign in\): (\S+)$/m.exec(stdout)?.[1];
    expect(url, stdout).toBeDefined();
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(stdout).toContain('agents: delete-files, trip-planner, extract-invoice, order-status\n');
    // A turn of an example, submitted through the API, is run by the worker and parks.
    const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const submitted = await fetch(`${url}/api/turns`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({
        agent: 'delete-files',
        input: 'Free some space in tmp/: delete the build log and the cache, keep my notes.',
      }),
    });
    const { id } = (await submitted.json()) as { id: string };
    let status = '';
    for (let i = 0; i < 200 && status !== 'awaiting_approval'; i += 1) {
      status = ((await (await fetch(`${url}/api/turns/${id}`, { headers: auth })).json()) as { status: string }).status;
      if (status !== 'awaiting_approval') await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(status).toBe('awaiting_approval');
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(existsSync(join(store, 'turnkit-dev.json'))).toBe(false);
  }, 180_000);
});
