export { checkMcpServers } from './config.js';
export type { McpHttpServer, McpServerConfig, McpServers, McpStdioServer } from './config.js';
export { linearJsonSchemaValidator, UnsafePatternError } from './schema.js';
export { connectMcpServers } from './servers.js';
export type { ConnectOptions, McpConnection, McpSnapshot } from './servers.js';
export { mcpTools, mcpToolSet } from './tools.js';
export type { McpToolInfo, McpToolSet, McpToolsOptions } from './tools.js';
