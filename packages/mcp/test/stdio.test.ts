// A real MCP server spawned as a child process (stdio), and a turn parked for approval on one of
// its tools and resumed in another process that reconnects from the saved configuration.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createDispatcher } from '@turnkit/dispatch';
import { runTurn } from '@turnkit/inline';
import { connectMcpServers, type McpServers } from '@turnkit/mcp';
import { scriptedModel } from '@turnkit/testing';
import { describe, expect, it } from 'vitest';
import { script } from './fixtures/script.js';

const run = promisify(execFile);
const tsx = createRequire(import.meta.url).resolve('tsx/cli');
const serverFile = fileURLToPath(new URL('./fixtures/server.mjs', import.meta.url));
const resumeFile = fileURLToPath(new URL('./fixtures/resume-mcp.ts', import.meta.url));

const servers = (schema: '1' | '2' = '1'): McpServers => ({
  ops: { command: process.execPath, args: [serverFile], env: { MCP_FIXTURE_SCHEMA: schema }, trusted: true },
});

async function suspendOnDeploy(): Promise<string> {
  const mcp = await connectMcpServers(servers());
  try {
    const result = await runTurn({ model: scriptedModel(script), tools: mcp.tools, input: 'Deploy api.', id: 'turn-mcp' });
    expect(result.status).toBe('suspended');
    expect(result.pending?.map((p) => p.call.name)).toEqual(['ops__deploy']);
    const file = join(mkdtempSync(join(tmpdir(), 'turnkit-mcp-')), 'turn.json');
    // The configuration, not a client, travels with the turn, next to the snapshot of the tools.
    writeFileSync(file, JSON.stringify({ ...result, servers: servers(), mcp: mcp.snapshot(result.pending) }));
    return file;
  } finally {
    await mcp.close();
  }
}

async function resumeIn(file: string, edit?: (saved: Record<string, unknown>) => Record<string, unknown>) {
  if (edit !== undefined) {
    const { readFileSync } = await import('node:fs');
    writeFileSync(file, JSON.stringify(edit(JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>)));
  }
  const { stdout } = await run(process.execPath, [tsx, '--conditions=@turnkit/source', resumeFile, file], { timeout: 60_000 });
  return JSON.parse(stdout) as { status: string; changed: string[]; lines: string[] };
}

describe('a stdio server spawned as a child process', () => {
  it('lists and runs its tools; a trusted read-only tool runs without approval', async () => {
    const mcp = await connectMcpServers(servers());
    try {
      expect(mcp.info.map((i) => [i.name, i.tool])).toEqual([
        ['ops__deploy', 'deploy'],
        ['ops__status', 'status'],
      ]);
      expect(mcp.tools.map((t) => t.needsApproval)).toEqual([true, false]);
      const { results } = await createDispatcher({ tools: mcp.tools }).dispatch(
        [{ id: 'c1', name: 'ops__status', input: { service: 'api' } }],
        {
          turnId: 't1',
        },
      );
      expect(results[0]).toEqual({ callId: 'c1', name: 'ops__status', output: { service: 'api', up: true }, isError: false });
    } finally {
      await mcp.close();
    }
  });

  it('a server that cannot start is an error naming it', async () => {
    await expect(connectMcpServers({ broken: { command: process.execPath, args: ['-e', 'process.exit(3)'] } })).rejects.toThrow(
      /^MCP server 'broken' \(.* -e process\.exit\(3\)\) could not be reached: /,
    );
  });
});

describe('an MCP tool parked for approval, resumed in another process', () => {
  it('reconnects from the saved configuration and runs the approved call on a new server process', async () => {
    const file = await suspendOnDeploy();
    const resumed = await resumeIn(file);
    expect(resumed.status).toBe('stopped');
    expect(resumed.changed).toEqual([]);
    expect(resumed.lines.slice(0, 2)).toEqual(['user: Deploy api.', 'assistant: [call_1 ops__deploy]']);
    expect(resumed.lines[2]).toMatch(/^tool call_1 ops__deploy: ok "deployed api by server pid \d+"$/);
    expect(resumed.lines[3]).toBe('assistant: Deployed.');
  });

  it("notices that the server changed the tool's schema since the turn parked, and does not run the approved call", async () => {
    const file = await suspendOnDeploy();
    const resumed = await resumeIn(file, (saved) => ({ ...saved, servers: servers('2') }));
    expect(resumed.changed).toEqual(['ops__deploy']);
    expect(resumed.status).toBe('stopped');
    expect(resumed.lines[2]).toMatch(
      /^tool call_1 ops__deploy: error .*changed \(input schema or annotations\) since this call was parked for approval/,
    );
  });
});

describe('docs/mcp.md: a server over stdio', () => {
  it('runs examples/stdio.ts (it starts examples/weather-server.mjs) and prints what the page shows', async () => {
    const doc = readFileSync(new URL('../../../docs/mcp.md', import.meta.url), 'utf8');
    const shown = (doc.split('## A server over stdio\n')[1] ?? '').match(/It prints:\n\n```text\n([\s\S]*?)```/)?.[1];
    const example = fileURLToPath(new URL('../examples/stdio.ts', import.meta.url));
    const { stdout } = await run(process.execPath, [tsx, '--conditions=@turnkit/source', example], { timeout: 60_000 });
    expect(stdout).toBe(shown);
    expect(stdout).toContain('tool call_1 weather__forecast: ok "Sunny in Oslo."');
  }, 90_000);
});
