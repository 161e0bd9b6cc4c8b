// Scenario files that name MCP servers: the CLI starts them, offers their tools and closes them.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { turnkit } from './run-cli.js';

const scenario = fileURLToPath(new URL('./fixtures/mcp-status.json', import.meta.url));
const untrusted = fileURLToPath(new URL('./fixtures/mcp-untrusted.json', import.meta.url));
const server = fileURLToPath(new URL('./fixtures/mcp-server.mjs', import.meta.url));

/** A scenario in a fresh folder whose untrusted server reads its tool's version from `version.txt` there. */
function changingScenario(): { dir: string; scenario: string; file: string } {
  const dir = mkdtempSync(join(tmpdir(), 'turnkit-mcp-cli-'));
  writeFileSync(join(dir, 'version.txt'), '1');
  const scenario = join(dir, 'scenario.json');
  writeFileSync(
    scenario,
    JSON.stringify({
      input: 'Is the api up?',
      mcpServers: { ops: { command: process.execPath, args: [server, '--version-file', 'version.txt'] } },
      model: [{ calls: [{ name: 'ops__status', input: { service: 'api' } }] }, { text: 'Checked.' }],
    }),
  );
  return { dir, scenario, file: join(dir, 'turn.json') };
}

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

  it("saves each MCP tool's fingerprint with a suspended turn; a resume against a changed tool does not run the approved call", async () => {
    const { dir, scenario, file } = changingScenario();
    const run = await turnkit(['run', scenario, '--save', file]);
    expect(run.code).toBe(3);
    const saved = JSON.parse(readFileSync(file, 'utf8')) as { mcp?: { tools: Record<string, string>; parked: string[] } };
    expect(Object.keys(saved.mcp?.tools ?? {})).toEqual(['ops__status']);
    expect(saved.mcp?.tools.ops__status).toMatch(/^[0-9a-f]+$/);
    expect(saved.mcp?.parked).toEqual(['call_1']);

    writeFileSync(join(dir, 'version.txt'), '2');
    const trace = join(dir, 'trace.json');
    const resumed = await turnkit(['resume', file, '--approve', 'call_1', '--trace', trace]);
    expect(resumed.stderr).toContain('MCP tools changed (input schema or annotations) since this turn was saved: ops__status.');
    // The approved call's one result is the error saying why it did not run.
    const recorded = JSON.stringify(JSON.parse(readFileSync(trace, 'utf8')));
    expect(recorded).toContain("the MCP tool 'ops__status' changed (input schema or annotations) since this call was parked");
    expect(recorded).toContain('"errorKind":"not_executed"');
    expect(resumed.stdout).toContain('ops__status');
    expect(resumed.stdout).not.toContain('api is up');
    expect(resumed.code).toBe(0);
  });

  it('the same resume against an unchanged tool runs the call and warns of nothing', async () => {
    const { scenario, file } = changingScenario();
    expect((await turnkit(['run', scenario, '--save', file])).code).toBe(3);
    const resumed = await turnkit(['resume', file, '--approve', 'call_1']);
    expect(resumed.stderr).toBe('');
    expect(resumed.stdout).toContain('api is up');
    expect(resumed.code).toBe(0);
  });

  it('a suspended file whose MCP record names a call that is not pending is refused before anything runs', async () => {
    const { scenario, file } = changingScenario();
    expect((await turnkit(['run', scenario, '--save', file])).code).toBe(3);
    const saved = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    writeFileSync(file, JSON.stringify({ ...saved, mcp: { tools: {}, parked: ['call_9'] } }));
    const resumed = await turnkit(['resume', file, '--approve', 'call_1']);
    expect(resumed.code).toBe(2);
    expect(resumed.stderr).toContain("at mcp.parked: 'call_9' is not one of its pending calls (call_1)");
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
