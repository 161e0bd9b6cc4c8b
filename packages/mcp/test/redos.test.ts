// Schemas from an untrusted server cannot stall the process: their patterns and formats run on a
// linear-time engine, against a real SDK server over the in-memory transport. On a backtracking
// engine each of these calls would block the event loop for far longer than the test timeout.
import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import { Server } from '@modelcontextprotocol/server';
import { createDispatcher } from '@turnkit/dispatch';
import { linearJsonSchemaValidator, mcpTools } from '@turnkit/mcp';
import { afterEach, describe, expect, it } from 'vitest';

const EVIL = '(a+)+$';
const evil = `${'a'.repeat(40)}!`;

const open: Client[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
});

/** A raw server listing `tools` as given; each call answers with `structured` when set. */
async function rawServer(tools: object[], calls: string[], structured?: unknown, client?: Client): Promise<Client> {
  const server = new Server({ name: 'evil', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler('tools/list', async () => ({ tools }) as never);
  server.setRequestHandler('tools/call', async (request) => {
    calls.push(request.params.name);
    return { content: [{ type: 'text', text: 'ran' }], ...(structured === undefined ? {} : { structuredContent: structured }) };
  });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const c = client ?? new Client({ name: 'turnkit-test', version: '1.0.0' });
  await c.connect(clientSide);
  open.push(c);
  return c;
}

describe('catastrophic patterns run in linear time', () => {
  const schema = {
    type: 'object',
    properties: {
      name: { type: 'string', pattern: `^${EVIL}` },
      list: { type: 'array', items: { type: 'string', pattern: `^${EVIL}` } },
      nested: { type: 'object', properties: { deep: { $ref: '#/$defs/word' } } },
      link: { type: 'string', format: 'url' },
    },
    patternProperties: { '^(b+)+$': { type: 'number' } },
    $defs: { word: { type: 'string', pattern: `^${EVIL}` } },
  };

  it('an evil argument gets a validation error, a matching one reaches the server', async () => {
    const calls: string[] = [];
    const client = await rawServer([{ name: 'match', inputSchema: schema }], calls);
    const tools = await mcpTools(client, { server: 'evil', trusted: true });
    const dispatcher = createDispatcher({ tools, permissions: { allow: ['evil__*'] } });
    const inputs = [
      { name: evil },
      { list: ['aaa', evil] },
      { nested: { deep: evil } },
      { [`${'b'.repeat(40)}!`]: 1, ['b'.repeat(40)]: 'not a number' },
      { link: `http://${'::1:'.repeat(100_000)}!` },
      { name: 'aaaa', list: ['a'], nested: { deep: 'aa' }, bbb: 3, link: 'https://example.com/a' },
    ];
    const { results } = await dispatcher.dispatch(
      inputs.map((input, i) => ({ id: `c${i}`, name: 'evil__match', input })),
      { turnId: 't1' },
    );
    expect(results.map((r) => [r.isError, r.isError ? r.errorKind : r.output])).toEqual([
      ...inputs.slice(0, -1).map(() => [true, 'invalid_input']),
      [false, 'ran'],
    ]);
    expect(String(results[3]?.output)).toContain('must be number');
    expect(String(results[4]?.output)).toContain('must match format "url"');
    expect(calls).toEqual(['match']);
  });

  it("a client with linearJsonSchemaValidator checks a tool's structured output in linear time too", async () => {
    const calls: string[] = [];
    const client = new Client({ name: 'turnkit-test', version: '1.0.0' }, { jsonSchemaValidator: linearJsonSchemaValidator() });
    const outputSchema = { type: 'object', properties: { name: { type: 'string', pattern: `^${EVIL}` } } };
    await rawServer([{ name: 'out', inputSchema: { type: 'object' }, outputSchema }], calls, { name: evil }, client);
    const tools = await mcpTools(client, { server: 'evil', trusted: true });
    const { results } = await createDispatcher({ tools, permissions: { allow: ['evil__*'] } }).dispatch(
      [{ id: 'c1', name: 'evil__out', input: {} }],
      { turnId: 't1' },
    );
    expect(results[0]).toMatchObject({ isError: true, errorKind: 'tool_error' });
    expect(String(results[0]?.output)).toMatch(/must match pattern/);
  });
});

describe('patterns that need backtracking are refused', () => {
  it('leaves the tool out with a clear reason and keeps the other tools', async () => {
    const calls: string[] = [];
    const string = (pattern: string) => ({ type: 'object', properties: { a: { type: 'string', pattern } } });
    const client = await rawServer(
      [
        { name: 'good', inputSchema: string('^[a-z]+$') },
        { name: 'backref', inputSchema: string('^(a)\\1$') },
        { name: 'named', inputSchema: string('^(?<x>a)\\k<x>$') },
        { name: 'ahead', inputSchema: { type: 'object', patternProperties: { '^(?!x)': {} } } },
        {
          name: 'behind',
          inputSchema: { type: 'object', $defs: { d: { pattern: '(?<=a)b' } }, properties: { a: { $ref: '#/$defs/d' } } },
        },
      ],
      calls,
    );
    const skipped: string[] = [];
    const tools = await mcpTools(client, { server: 'evil', onSkip: (tool, reason) => skipped.push(`${tool}: ${reason}`) });
    expect(tools.map((t) => t.name)).toEqual(['evil__good']);
    expect(skipped).toHaveLength(4);
    expect(skipped[0]).toBe(
      "backref: MCP server 'evil', tool 'backref': its inputSchema has the pattern \"^(a)\\\\1$\", which cannot run on a linear-time regex engine (invalid escape sequence: `\\1`). " +
        'Patterns from MCP servers run on RE2 so that no schema can stall the process, and RE2 has no backreferences or lookaround. ' +
        'The tool is not offered; for it to be, the server must express the pattern without them.',
    );
    expect(skipped[1]).toContain(
      'tool \'named\': its inputSchema has the pattern "^(?<x>a)\\\\k<x>$", which cannot run on a linear-time regex engine (a backreference)',
    );
    expect(skipped[2]).toContain('tool \'ahead\': its inputSchema has the pattern "^(?!x)"');
    expect(skipped[3]).toContain('tool \'behind\': its inputSchema has the pattern "(?<=a)b"');
    const { results } = await createDispatcher({ tools, permissions: { allow: ['evil__*'] } }).dispatch(
      [{ id: 'c1', name: 'evil__good', input: { a: 'abc' } }],
      { turnId: 't1' },
    );
    expect(results[0]).toMatchObject({ isError: false, output: 'ran' });
    expect(calls).toEqual(['good']);
  });
});
