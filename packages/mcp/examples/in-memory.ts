import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import { fromJsonSchema, McpServer } from '@modelcontextprotocol/server';
import { runTurn } from '@turnkit/inline';
import { mcpTools } from '@turnkit/mcp';
import { call, scriptedModel, text, toolCalls, transcriptLines } from '@turnkit/testing';

// An MCP server (here in-process; usually a separate program) with one read-only tool.
const server = new McpServer({ name: 'weather', version: '1.0.0' });
server.registerTool(
  'forecast',
  {
    description: 'Forecast for a city.',
    inputSchema: fromJsonSchema<{ city: string }>({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }),
    annotations: { readOnlyHint: true },
  },
  async (args) => ({ content: [{ type: 'text', text: `Sunny in ${args.city}.` }] }),
);
const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
await server.connect(serverSide);
const client = new Client({ name: 'my-agent', version: '1.0.0' });
await client.connect(clientSide);

// Trusted: its read-only tools run without approval. Untrusted servers' tools all need approval.
const tools = await mcpTools(client, { server: 'weather', trusted: true });
console.log(tools.map((tool) => `${tool.name} needsApproval=${String(tool.needsApproval)}`).join('\n'));

const model = scriptedModel([toolCalls(call('weather__forecast', { city: 'Oslo' })), text('It will be sunny in Oslo.')]);
const result = await runTurn({ model, tools, input: 'Weather in Oslo?' });
console.log(transcriptLines(result.transcript).join('\n'));
await client.close();
