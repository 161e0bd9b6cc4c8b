// An MCP server's tools as turnkit tool definitions, and connections made from configuration.
export { checkMcpServers } from './config.js';
export type { McpServers } from './config.js';
export { linearJsonSchemaValidator } from './schema.js';
export { connectMcpServers } from './servers.js';
export { mcpTools, mcpToolSet } from './tools.js';
