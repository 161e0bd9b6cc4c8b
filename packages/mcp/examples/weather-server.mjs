// An MCP server over stdio, written with the official SDK (`@modelcontextprotocol/server`): one
// read-only tool. A client starts it as a child process and talks to it on stdin and stdout.
import { fromJsonSchema, McpServer } from '@modelcontextprotocol/server';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';

const server = new McpServer({ name: 'weather', version: '1.0.0' });
server.registerTool(
  'forecast',
  {
    description: 'Forecast for a city.',
    inputSchema: fromJsonSchema({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }),
    annotations: { readOnlyHint: true },
  },
  async (args) => ({ content: [{ type: 'text', text: `Sunny in ${args.city}.` }] }),
);
await server.connect(new StdioServerTransport());
