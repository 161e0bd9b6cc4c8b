// A real MCP server over Streamable HTTP on 127.0.0.1 (the SDK's web-standard handler behind
// node:http), reached from configuration by URL, with a header the server checks.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { createMcpHandler, fromJsonSchema, McpServer } from '@modelcontextprotocol/server';
import { createDispatcher } from '@turnkit/dispatch';
import { connectMcpServers } from '@turnkit/mcp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const handler = createMcpHandler(() => {
  const server = new McpServer({ name: 'docs', version: '1.0.0' });
  server.registerTool(
    'lookup',
    {
      description: 'Looks a word up.',
      inputSchema: fromJsonSchema<{ word: string }>({
        type: 'object',
        properties: { word: { type: 'string' } },
        required: ['word'],
      }),
      annotations: { readOnlyHint: true },
    },
    async ({ word }) => ({ content: [{ type: 'text', text: `${word}: a word` }] }),
  );
  return server;
});

async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (req.headers.authorization !== 'Bearer secret') {
    res.writeHead(401).end('no');
    return;
  }
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const headers = new Headers();
  for (const [key, value] of Object.entries(req.headers)) if (typeof value === 'string') headers.set(key, value);
  const body = chunks.length === 0 ? null : Buffer.concat(chunks);
  const response = await handler.fetch(
    new Request(`http://127.0.0.1${req.url ?? '/'}`, { method: req.method ?? 'GET', headers, body }),
  );
  res.writeHead(response.status, Object.fromEntries(response.headers));
  if (response.body === null) res.end();
  else Readable.fromWeb(response.body as import('node:stream/web').ReadableStream).pipe(res);
}

let http: Server;
let url = '';
beforeAll(async () => {
  http = createServer((req, res) => void serve(req, res).catch(() => res.writeHead(500).end()));
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
});
afterAll(async () => {
  await handler.close();
  await new Promise((resolve) => http.close(resolve));
});

describe('a server reached by URL (Streamable HTTP)', () => {
  it('connects with the configured headers and runs a tool', async () => {
    const mcp = await connectMcpServers({ docs: { url, headers: { authorization: 'Bearer secret' }, trusted: true } });
    try {
      expect(mcp.tools.map((t) => [t.name, t.needsApproval])).toEqual([['docs__lookup', false]]);
      const { results } = await createDispatcher({ tools: mcp.tools }).dispatch(
        [{ id: 'c1', name: 'docs__lookup', input: { word: 'turn' } }],
        {
          turnId: 't1',
        },
      );
      expect(results[0]).toEqual({ callId: 'c1', name: 'docs__lookup', output: 'turn: a word', isError: false });
    } finally {
      await mcp.close();
    }
  });

  it('a server that refuses the client is an error naming it and its URL', async () => {
    await expect(connectMcpServers({ docs: { url } })).rejects.toThrow(`MCP server 'docs' (${url}) could not be reached: `);
  });
});
