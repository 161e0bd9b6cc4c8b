// Real MCP servers from the official SDK, connected to a real client over the SDK's in-memory
// transport; each records the calls it ran and the cancellations it saw.
import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import { fromJsonSchema, McpServer } from '@modelcontextprotocol/server';

export interface TestServer {
  readonly client: Client;
  readonly server: McpServer;
  /** Tool names in the order the server ran them. */
  readonly calls: string[];
  /** Tools whose request signal aborted while they ran. */
  readonly aborted: string[];
  close(): Promise<void>;
}

type Content = { type: 'text'; text: string } | { type: 'image'; data: string; mimeType: string };

export async function connect(server: McpServer, calls: string[], aborted: string[]): Promise<TestServer> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'turnkit-test', version: '1.0.0' });
  await client.connect(clientSide);
  return { client, server, calls, aborted, close: () => client.close() };
}

/** A weather server: a read-only forecast, a tool that reports an error, a slow one, mixed content, a raw JSON Schema. */
export async function weatherServer(name = 'weather'): Promise<TestServer> {
  const calls: string[] = [];
  const aborted: string[] = [];
  const server = new McpServer({ name, version: '1.0.0' });
  const object = (properties: Record<string, unknown>, required: string[]) =>
    fromJsonSchema<Record<string, unknown>>({ type: 'object', properties, required } as Parameters<typeof fromJsonSchema>[0]);
  server.registerTool(
    'forecast',
    {
      description: 'Forecast for a city.',
      inputSchema: object({ city: { type: 'string', minLength: 1 }, days: { type: 'integer', minimum: 1, maximum: 7 } }, [
        'city',
      ]),
      annotations: { readOnlyHint: true },
    },
    async (args) => {
      calls.push('forecast');
      return {
        content: [{ type: 'text', text: 'ignored when structured' }],
        structuredContent: { city: args.city, sky: 'sunny' },
      };
    },
  );
  server.registerTool('alerts', { description: 'Weather alerts.', inputSchema: object({}, []) }, async () => {
    calls.push('alerts');
    const content: Content[] = [
      { type: 'text', text: 'Storm warning.' },
      { type: 'image', data: 'AAAA', mimeType: 'image/png' },
      { type: 'text', text: 'Stay inside.' },
    ];
    return { content };
  });
  server.registerTool('broken', { description: 'Always fails.', inputSchema: object({}, []) }, async () => {
    calls.push('broken');
    return { content: [{ type: 'text', text: 'station offline' }], isError: true };
  });
  server.registerTool(
    'slow',
    { description: 'Takes a while.', inputSchema: object({}, []), annotations: { readOnlyHint: true } },
    async (_args, ctx) => {
      calls.push('slow');
      const signal = ctx.mcpReq.signal;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 20_000);
        signal.addEventListener('abort', () => {
          aborted.push('slow');
          clearTimeout(timer);
          resolve();
        });
      });
      return { content: [{ type: 'text', text: 'finished' }] };
    },
  );
  return connect(server, calls, aborted);
}
