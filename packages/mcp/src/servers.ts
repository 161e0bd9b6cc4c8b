// connectMcpServers: clients made from plain configuration, so a turn resumed in another process
// reconnects from the same configuration instead of needing a live client object. A snapshot
// saved with a suspended turn records each tool's fingerprint and the parked MCP calls; on
// reconnect, a tool whose schema or annotations changed is reported, and its parked calls are
// answered with an error instead of running against a tool the person did not approve.

import type { ParkedCall } from '@turnkit/core';
import { ToolError, type ToolContext, type ToolDefinition } from '@turnkit/dispatch';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { definedProps } from '@turnkit/core/internal';
import { checkMcpServers, type McpServerConfig, type McpServers } from './config.js';
import { linearJsonSchemaValidator } from './schema.js';
import { type McpToolInfo, mcpToolSet } from './tools.js';

/** What to save next to a suspended turn (plain JSON), and pass back as `since` when reconnecting. */
export interface McpSnapshot {
  /** Fingerprint of each MCP tool, by model-facing name. */
  readonly tools: { readonly [name: string]: string };
  /** Ids of the parked calls that go to MCP tools. */
  readonly parked: readonly string[];
}

export interface ConnectOptions {
  /** The snapshot saved when the turn suspended. */
  readonly since?: unknown;
  /** Told about each tool left out (schema not usable). */
  readonly onSkip?: (server: string, tool: string, reason: string) => void;
  /** The client's name in the MCP handshake. Default `turnkit`. */
  readonly clientName?: string;
}

/**
 * The tools of one or more MCP servers, connected (`mcpTools`, `connectMcpServers`): pass `tools` to `runTurn` or
 * `createDispatcher`, and `close` when done.
 */
export interface McpConnection {
  // any: each tool has its own input type.
  /**
   * The servers' tools as turnkit tool definitions: every call goes through the dispatcher (permissions, hooks,
   * approvals) like any tool.
   */
  readonly tools: readonly ToolDefinition<any>[];
  /** Where each tool comes from: its model-facing name, its server, its name there, and a fingerprint of its schema and annotations. */
  readonly info: readonly McpToolInfo[];
  /** Tools changed (schema or annotations) or gone since the snapshot passed as `since`, by model-facing name. */
  readonly changed: readonly string[];
  /** The snapshot to save with a suspended turn: `connection.snapshot(result.pending)`. */
  snapshot(pending?: readonly ParkedCall[]): McpSnapshot;
  /** Closes every client (and ends stdio servers). */
  close(): Promise<void>;
}

function readSnapshot(value: unknown): McpSnapshot {
  const v = value as { tools?: unknown; parked?: unknown } | null;
  if (v === null || typeof v !== 'object' || Array.isArray(v))
    throw new TypeError('connectMcpServers: since must be a snapshot { tools, parked }.');
  const tools = v.tools;
  if (
    tools === null ||
    typeof tools !== 'object' ||
    Array.isArray(tools) ||
    Object.values(tools).some((h) => typeof h !== 'string')
  )
    throw new TypeError('connectMcpServers: since.tools must be an object of fingerprints (strings) by tool name.');
  if (!Array.isArray(v.parked) || v.parked.some((id) => typeof id !== 'string'))
    throw new TypeError('connectMcpServers: since.parked must be an array of call ids.');
  return { tools: tools as McpSnapshot['tools'], parked: v.parked as string[] };
}

function transportFor(config: McpServerConfig): StdioClientTransport | StreamableHTTPClientTransport {
  if ('command' in config) {
    return new StdioClientTransport({
      command: config.command,
      args: [...(config.args ?? [])],
      ...definedProps({ env: config.env === undefined ? undefined : { ...config.env } }),
      ...definedProps({ cwd: config.cwd }),
    });
  }
  const headers = config.headers === undefined ? undefined : { ...config.headers };
  return new StreamableHTTPClientTransport(
    new URL(config.url),
    definedProps({ requestInit: headers === undefined ? undefined : { headers } }),
  );
}

function describeServer(name: string, config: McpServerConfig): string {
  return 'command' in config
    ? `'${name}' (${[config.command, ...(config.args ?? [])].join(' ').slice(0, 120)})`
    : `'${name}' (${config.url})`;
}

/** A tool whose parked calls are refused because it changed since they were parked. */
function refusingParked(tool: ToolDefinition<any>, parked: ReadonlySet<string>): ToolDefinition<any> {
  return {
    ...tool,
    execute(input: unknown, ctx: ToolContext) {
      if (parked.has(ctx.callId))
        throw new ToolError(
          `the MCP tool '${tool.name}' changed (input schema or annotations) since this call was parked for approval, so the approved call was not run. Call it again if it is still wanted.`,
          { kind: 'not_executed' },
        );
      return tool.execute(input, ctx);
    },
  };
}

/**
 * Connects to each configured server and lists its tools. Throws an Error naming the server when
 * one cannot be reached (the clients already connected are closed).
 *
 * @example
 * const mcp = await connectMcpServers({ files: { command: 'npx', args: ['-y', 'some-mcp-server'] } });
 * try { await runTurn({ model, tools: mcp.tools, input }); } finally { await mcp.close(); }
 */
export async function connectMcpServers(servers: McpServers, options: ConnectOptions = {}): Promise<McpConnection> {
  checkMcpServers(servers, 'connectMcpServers: servers');
  const since = options.since === undefined ? undefined : readSnapshot(options.since);
  const clients: Client[] = [];
  const close = async (): Promise<void> => {
    await Promise.allSettled(clients.map((client) => client.close()));
  };
  const taken = new Set<string>();
  const tools: ToolDefinition<any>[] = [];
  const info: McpToolInfo[] = [];
  try {
    for (const [name, config] of Object.entries(servers)) {
      // The client checks each tool's structured output against its output schema: in linear time too.
      const client = new Client(
        { name: options.clientName ?? 'turnkit', version: '0.1.0' },
        { jsonSchemaValidator: linearJsonSchemaValidator() },
      );
      try {
        await client.connect(transportFor(config));
      } catch (error) {
        throw new Error(
          `MCP server ${describeServer(name, config)} could not be reached: ${error instanceof Error ? error.message : String(error)}`,
        );
      }
      clients.push(client);
      const set = await mcpToolSet(client, {
        server: name,
        taken,
        ...definedProps({ trusted: config.trusted, timeoutMs: config.timeoutMs, include: config.include }),
        ...(options.onSkip === undefined
          ? {}
          : { onSkip: (tool: string, reason: string) => options.onSkip?.(name, tool, reason) }),
      });
      tools.push(...set.tools);
      info.push(...set.info);
    }
  } catch (error) {
    await close();
    throw error;
  }
  const fingerprints = new Map(info.map((i) => [i.name, i.fingerprint]));
  const changed =
    since === undefined
      ? []
      : Object.keys(since.tools)
          .filter((name) => fingerprints.get(name) !== since.tools[name])
          .sort();
  const parked = new Set(since?.parked ?? []);
  const changedSet = new Set(changed);
  return {
    tools: tools.map((tool) => (changedSet.has(tool.name) && parked.size > 0 ? refusingParked(tool, parked) : tool)),
    info,
    changed,
    snapshot: (pending = []) => ({
      tools: Object.fromEntries(fingerprints),
      parked: pending.filter((p) => fingerprints.has(p.call.name)).map((p) => p.call.id),
    }),
    close,
  };
}
