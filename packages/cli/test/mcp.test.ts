// Scenario files that name MCP servers: the CLI starts them, offers their tools and closes them.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { turnkit } from './run-cli.js';

const scenario = fileURLToPath(new URL('./fixtures/mcp-status.json', import.meta.url));
const untrusted = fileURLToPath(new URL('./fixtures/mcp-untrusted.json', import.meta.url));

describe('MCP servers in a scenario', () => {
  it("runs a turn with a stdio server's tool (started in the scenario's folder)", async () => {
    const run = await turnkit(['run', scenario]);
    expect(run.stderr).toBe('');
    expect(run.stdout).toContain('ops__status');
    expect(run.stdout).toContain('api is up');
    expect(run.stdout).toContain('stopped: completed');
    expect(run.code).toBe(0);
  });

  it('an untrusted server parks its tool for approval; `turnkit resume` reconnects from the scenario and runs it', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'turnkit-mcp-cli-')), 'turn.json');
    const run = await turnkit(['run', untrusted, '--save', file]);
    expect(run.code).toBe(3);
    expect(run.stdout).toContain('ops__status');
    const resumed = await turnkit(['resume', file, '--approve', 'call_1']);
    expect(resumed.stderr).toBe('');
    expect(resumed.stdout).toContain('api is up');
    expect(resumed.stdout).toContain('stopped: completed');
    expect(resumed.code).toBe(0);
  });

  it('a bad server entry is a usage error naming the scenario and the field', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'turnkit-mcp-cli-')), 'bad.json');
    writeFileSync(
      file,
      JSON.stringify({
        input: 'hi',
        mcpServers: { ops: { command: 'node', url: 'http://127.0.0.1:1/' } },
        model: [{ text: 'hi' }],
      }),
    );
    const run = await turnkit(['run', file]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      `Scenario ${file}: mcpServers.ops needs exactly one of command (a stdio server) and url (an HTTP server).`,
    );
  });
});
