// mcpTools against a real SDK server over the in-memory transport: the tools go through the
// dispatcher's chokepoint like any other, and everything the server says is treated as untrusted.
import { fromJsonSchema, McpServer, Server } from '@modelcontextprotocol/server';
import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import { createDispatcher } from '@turnkit/dispatch';
import { runTurn } from '@turnkit/inline';
import { mcpTools, mcpToolSet } from '@turnkit/mcp';
import { call, scriptedModel, text, toolCalls } from '@turnkit/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { connect, type TestServer, weatherServer } from './servers.js';

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});
async function weather(name?: string): Promise<TestServer> {
  const server = await weatherServer(name);
  open.push(server);
  return server;
}

describe('tool definitions from a server', () => {
  it('prefixes names with the server, offers the server schema unchanged, and needs approval by default', async () => {
    const { client } = await weather();
    const listed = await client.listTools();
    const tools = await mcpTools(client, { server: 'weather' });
    expect(tools.map((t) => t.name)).toEqual(['weather__forecast', 'weather__alerts', 'weather__broken', 'weather__slow']);
    expect(tools[0]?.inputSchema).toEqual(listed.tools[0]?.inputSchema);
    expect(tools[0]?.description).toBe('Forecast for a city.');
    // Annotations are hints from an untrusted server: readOnlyHint alone changes nothing.
    for (const tool of tools) expect([tool.name, tool.needsApproval, tool.readOnly]).toEqual([tool.name, true, false]);
  });

  it('a trusted server: read-only tools run without approval, the others still need it', async () => {
    const { client } = await weather();
    const tools = await mcpTools(client, { server: 'weather', trusted: true });
    expect(Object.fromEntries(tools.map((t) => [t.name, [t.needsApproval, t.readOnly]]))).toEqual({
      weather__forecast: [false, true],
      weather__alerts: [true, false],
      weather__broken: [true, false],
      weather__slow: [false, true],
    });
  });

  it('an untrusted read-only tool parks for approval in a turn', async () => {
    const { client, calls } = await weather();
    const tools = await mcpTools(client, { server: 'weather' });
    const result = await runTurn({
      model: scriptedModel([toolCalls(call('weather__forecast', { city: 'Oslo' }))]),
      tools,
      input: 'Weather?',
    });
    expect(result.status).toBe('suspended');
    expect(result.pending?.map((p) => p.call.name)).toEqual(['weather__forecast']);
    expect(calls).toEqual([]);
  });

  it('leaves out a tool whose schema does not compile, says why, and keeps the others', async () => {
    const server = new Server({ name: 'raw', version: '1.0.0' }, { capabilities: { tools: {} } });
    server.setRequestHandler('tools/list', async () => ({
      tools: [
        { name: 'good', inputSchema: { type: 'object', properties: {} } },
        { name: 'badtype', inputSchema: { type: 'object', properties: { a: { type: 'nonsense' } } } },
        { name: 'badref', inputSchema: { type: 'object', properties: { a: { $ref: '#/nowhere' } } } },
      ],
    }));
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: 'turnkit-test', version: '1.0.0' });
    await client.connect(clientSide);
    open.push(client);
    const skipped: string[] = [];
    const tools = await mcpTools(client, { server: 'raw', onSkip: (tool, reason) => skipped.push(`${tool}: ${reason}`) });
    expect(tools.map((t) => t.name)).toEqual(['raw__good']);
    expect(skipped).toEqual([
      'badtype: its inputSchema does not compile (type must be JSONType or JSONType[]: nonsense)',
      "badref: its inputSchema does not compile (can't resolve reference #/nowhere from id #)",
    ]);
  });

  it('include keeps only the named tools', async () => {
    const { client } = await weather();
    const tools = await mcpTools(client, { server: 'weather', include: ['alerts', 'no-such-tool'] });
    expect(tools.map((t) => t.name)).toEqual(['weather__alerts']);
  });

  it('refuses a bad server name', async () => {
    const { client } = await weather();
    await expect(mcpTools(client, { server: 'my server' })).rejects.toThrow(
      "server \"my server\" is invalid: use 1 to 32 letters, digits, '_' or '-'.",
    );
  });
});

describe('calls through the dispatcher', () => {
  it('prefers structured content, joins text parts and summarises the others', async () => {
    const { client, calls } = await weather();
    const tools = await mcpTools(client, { server: 'weather', trusted: true });
    const dispatcher = createDispatcher({ tools, permissions: { allow: ['weather__alerts'] } });
    const { results } = await dispatcher.dispatch(
      [
        { id: 'c1', name: 'weather__forecast', input: { city: 'Oslo' } },
        { id: 'c2', name: 'weather__alerts', input: {} },
      ],
      { turnId: 't1' },
    );
    expect(results).toEqual([
      { callId: 'c1', name: 'weather__forecast', output: { city: 'Oslo', sky: 'sunny' }, isError: false },
      {
        callId: 'c2',
        name: 'weather__alerts',
        output: 'Storm warning.\n[image image/png, 3 bytes]\nStay inside.',
        isError: false,
      },
    ]);
    expect(calls.sort()).toEqual(['alerts', 'forecast']);
  });

  it('an isError result becomes an error result (the turn goes on)', async () => {
    const { client } = await weather();
    const tools = await mcpTools(client, { server: 'weather' });
    const model = scriptedModel([toolCalls(call('weather__broken', {})), text('The station is offline.')]);
    const result = await runTurn({ model, tools, input: 'Alerts?', approve: () => ({ call_1: { type: 'approve' } }) });
    expect(result.status).toBe('stopped');
    const tool = result.transcript.find((m) => m.role === 'tool');
    expect(tool).toEqual({
      role: 'tool',
      result: {
        callId: 'call_1',
        name: 'weather__broken',
        isError: true,
        errorKind: 'tool_error',
        output:
          "Error calling tool 'weather__broken': ToolError: MCP server 'weather' reported an error from 'broken': station offline",
      },
    });
  });

  it("validates the input against the server's JSON Schema before the call: the server never sees a bad input", async () => {
    const { client, calls } = await weather();
    const tools = await mcpTools(client, { server: 'weather', trusted: true });
    const dispatcher = createDispatcher({ tools });
    const { results } = await dispatcher.dispatch(
      [
        { id: 'c1', name: 'weather__forecast', input: { city: 'Oslo', days: 9 } },
        { id: 'c2', name: 'weather__forecast', input: { days: 2 } },
      ],
      { turnId: 't1' },
    );
    expect(results.map((r) => [r.isError, r.output])).toEqual([
      [
        true,
        "Invalid input for 'weather__forecast':\n- (root): data/days must be <= 7\nFix the arguments and call 'weather__forecast' again.",
      ],
      [
        true,
        "Invalid input for 'weather__forecast':\n- (root): data must have required property 'city'\nFix the arguments and call 'weather__forecast' again.",
      ],
    ]);
    expect(calls).toEqual([]);
  });

  it('a protocol error (the server dropped the tool after listing it) becomes an error result', async () => {
    const calls: string[] = [];
    const server = new McpServer({ name: 'fickle', version: '1.0.0' });
    const registered = server.registerTool(
      'ping',
      {
        description: 'Ping.',
        inputSchema: fromJsonSchema({ type: 'object', properties: {} }),
        annotations: { readOnlyHint: true },
      },
      async () => ({ content: [{ type: 'text', text: 'pong' }] }),
    );
    const connected = await connect(server, calls, []);
    open.push(connected);
    const tools = await mcpTools(connected.client, { server: 'fickle', trusted: true });
    registered.remove();
    const { results } = await createDispatcher({ tools }).dispatch([{ id: 'c1', name: 'fickle__ping', input: {} }], {
      turnId: 't1',
    });
    expect(results[0]).toMatchObject({ isError: true, errorKind: 'unknown_tool' });
    expect(results[0]?.output).toMatch(
      /^Error calling tool 'fickle__ping': ToolError \(unknown_tool\): MCP server 'fickle' has no tool 'ping' any more \(.*not found.*\)\. Its tool list changed; use the tools offered now\.$/,
    );
  });

  it('a cancelled turn cancels the request on the server', async () => {
    const { client, aborted, calls } = await weather();
    const tools = await mcpTools(client, { server: 'weather', trusted: true });
    const controller = new AbortController();
    const model = scriptedModel([toolCalls(call('weather__slow', {}))]);
    const running = runTurn({ model, tools, input: 'Wait.', signal: controller.signal });
    await expect.poll(() => calls).toEqual(['slow']);
    controller.abort('user pressed stop');
    const result = await running;
    expect(result.status).toBe('cancelled');
    await expect.poll(() => aborted).toEqual(['slow']);
  });

  it("a call past the tool's timeoutMs is cancelled on the server too", async () => {
    const { client, aborted } = await weather();
    const tools = await mcpTools(client, { server: 'weather', trusted: true, timeoutMs: 50 });
    const { results } = await createDispatcher({ tools }).dispatch([{ id: 'c1', name: 'weather__slow', input: {} }], {
      turnId: 't1',
    });
    expect(results[0]).toMatchObject({
      isError: true,
      errorKind: 'timeout',
      output: "Tool 'weather__slow' timed out after 50 ms.",
    });
    await expect.poll(() => aborted).toEqual(['slow']);
  });
});

describe('names', () => {
  it('two servers with the same tool names do not collide, and each call reaches its own server', async () => {
    const a = await weather('north');
    const b = await weather('south');
    const taken = new Set<string>();
    const north = await mcpTools(a.client, { server: 'north', trusted: true, taken });
    const south = await mcpTools(b.client, { server: 'south', trusted: true, taken });
    const dispatcher = createDispatcher({ tools: [...north, ...south] });
    await dispatcher.dispatch([{ id: 'c1', name: 'south__forecast', input: { city: 'Rome' } }], { turnId: 't1' });
    expect([a.calls, b.calls]).toEqual([[], ['forecast']]);
  });

  it('sanitises names providers refuse and keeps every name unique, also ignoring case', async () => {
    const server = new McpServer({ name: 'odd', version: '1.0.0' });
    const names = ['get.weather', 'get_weather', 'GET_WEATHER', 'x'.repeat(80), 'v1.2.status'];
    for (const name of names)
      server.registerTool(
        name,
        { description: name, inputSchema: fromJsonSchema({ type: 'object', properties: {} }) },
        async () => ({
          content: [{ type: 'text', text: `ran ${name}` }],
        }),
      );
    const connected = await connect(server, [], []);
    open.push(connected);
    const { tools, info } = await mcpToolSet(connected.client, { server: 'odd', trusted: true });
    const given = tools.map((t) => t.name);
    for (const name of given) expect(name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
    expect(new Set(given.map((n) => n.toLowerCase())).size).toBe(names.length);
    expect(given[1]).toBe('odd__get_weather');
    expect(info.map((i) => i.tool)).toEqual(names);
    // Each name maps back to the server's own name.
    const dispatcher = createDispatcher({ tools, permissions: { allow: given } });
    const { results } = await dispatcher.dispatch(
      given.map((name, i) => ({ id: `c${i}`, name, input: {} })),
      { turnId: 't1' },
    );
    expect(results.map((r) => r.output)).toEqual(names.map((n) => `ran ${n}`));
  });
});
