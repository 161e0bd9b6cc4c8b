// mcpTools: a connected MCP client's tools as turnkit tool definitions. Everything the server says
// is untrusted: names are made safe, schemas are compiled before use (a tool whose schema does not
// compile is left out and reported), annotations never loosen approval unless the user trusts the
// server, and results are read defensively. A schema's regular expressions run in linear time
// (see regex.ts): a pattern that needs backtracking is refused and its tool left out.

import type { JsonObject } from '@turnkit/core/internal';
import { definedProps } from '@turnkit/core/internal';
import type { ToolContext, ToolDefinition } from '@turnkit/dispatch';
import type { Client } from '@modelcontextprotocol/client';
import { SERVER_NAME, toolNames } from './names.js';
import { protocolError, resultOutput } from './results.js';
import { jsonSchemaInput, toolFingerprint, UnsafePatternError } from './schema.js';
import { shown } from './regex.js';

export interface McpToolsOptions {
  /** The server's name: tool names are prefixed with `<server>__`. 1 to 32 letters, digits, '_' or '-'. */
  readonly server: string;
  /**
   * Trust this server's annotations: a tool it marks `readOnlyHint: true` runs without approval
   * (and is `readOnly` for policies). Default false: every tool of the server needs approval.
   */
  readonly trusted?: boolean;
  /** Deadline of each call, in ms (the dispatcher's default applies otherwise). */
  readonly timeoutMs?: number;
  /** Only these MCP tool names (as the server names them). Default: every tool. */
  readonly include?: readonly string[];
  /** Told about each tool left out (its schema is not an object schema, or does not compile). */
  readonly onSkip?: (tool: string, reason: string) => void;
  /** Lower-cased names already taken by other servers (shared by `connectMcpServers`). */
  readonly taken?: Set<string>;
}

/** What `mcpTools` knows of each tool: the model-facing name, the server's name for it, and its fingerprint. */
export interface McpToolInfo {
  /** The name the model sees: `<server>__<tool>`. */
  readonly name: string;
  /** The server it comes from. */
  readonly server: string;
  /** Its name on that server. */
  readonly tool: string;
  /** sha256 of the tool's input schema and annotations, to notice a change after a turn parks. */
  readonly fingerprint: string;
}

/** The definitions plus what each one maps back to. */
export interface McpToolSet {
  // any: each tool has its own input type.
  readonly tools: readonly ToolDefinition<any>[];
  readonly info: readonly McpToolInfo[];
}

interface ListedTool {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: JsonObject;
  readonly readOnlyHint: boolean;
  readonly idempotentHint: boolean;
  /** As the server sent them, for the fingerprint. */
  readonly annotations: unknown;
}

function checkOptions(options: McpToolsOptions): void {
  if (options === null || typeof options !== 'object') throw new TypeError('mcpTools needs options { server }.');
  if (typeof options.server !== 'string' || !SERVER_NAME.test(options.server))
    throw new TypeError(
      `mcpTools: server ${JSON.stringify(String(options.server)).slice(0, 60)} is invalid: use 1 to 32 letters, digits, '_' or '-'.`,
    );
  if (options.trusted !== undefined && typeof options.trusted !== 'boolean')
    throw new TypeError('mcpTools: trusted must be a boolean.');
  const timeout = options.timeoutMs;
  if (timeout !== undefined && (typeof timeout !== 'number' || !Number.isInteger(timeout) || timeout < 1))
    throw new TypeError(`mcpTools: timeoutMs must be a whole number of milliseconds >= 1, got ${String(timeout)}.`);
}

/** A listed tool read defensively; a reason when it cannot be offered. */
function readTool(raw: unknown): ListedTool | string {
  const t = (raw ?? {}) as Record<string, unknown>;
  if (typeof t['name'] !== 'string' || t['name'] === '') return 'it has no name';
  const schema = t['inputSchema'];
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema) || (schema as JsonObject)['type'] !== 'object')
    return 'its inputSchema is not a JSON Schema of type "object"';
  const annotations = (t['annotations'] ?? {}) as Record<string, unknown>;
  return {
    name: t['name'],
    description: typeof t['description'] === 'string' ? t['description'] : '',
    inputSchema: schema as JsonObject,
    readOnlyHint: annotations['readOnlyHint'] === true,
    idempotentHint: annotations['idempotentHint'] === true,
    annotations: t['annotations'] ?? null,
  };
}

/** Why a tool whose input schema does not compile is left out. */
function skipReason(server: string, tool: string, error: unknown): string {
  if (error instanceof UnsafePatternError)
    return (
      `MCP server '${server}', tool '${tool}': its inputSchema has the pattern ${shown(error.pattern)}, which cannot run on a linear-time regex engine (${error.reason}). ` +
      'Patterns from MCP servers run on RE2 so that no schema can stall the process, and RE2 has no backreferences or lookaround. ' +
      'The tool is not offered; for it to be, the server must express the pattern without them.'
    );
  return `its inputSchema does not compile (${error instanceof Error ? error.message : String(error)})`;
}

function define(client: Client, options: McpToolsOptions, name: string, tool: ListedTool): ToolDefinition<JsonObject> {
  const trustedReadOnly = options.trusted === true && tool.readOnlyHint;
  return {
    name,
    description: tool.description,
    input: jsonSchemaInput(tool.inputSchema),
    inputSchema: tool.inputSchema,
    async execute(input: JsonObject, ctx: ToolContext) {
      let result: unknown;
      try {
        result = await client.callTool(
          { name: tool.name, arguments: input as Record<string, unknown> },
          { signal: ctx.signal, ...definedProps({ timeout: options.timeoutMs }) },
        );
      } catch (error) {
        throw protocolError(error, options.server, tool.name, ctx.signal);
      }
      return resultOutput(result, options.server, tool.name);
    },
    ...definedProps({ timeoutMs: options.timeoutMs }),
    readOnly: trustedReadOnly,
    needsApproval: !trustedReadOnly,
    loopExempt: false,
    idempotent: options.trusted === true && tool.idempotentHint,
  };
}

/**
 * The tools of a connected MCP server as turnkit tool definitions, with what each maps back to.
 * Throws when the server cannot list its tools.
 *
 * @example
 * const { tools } = await mcpToolSet(client, { server: 'weather' });
 */
export async function mcpToolSet(client: Client, options: McpToolsOptions): Promise<McpToolSet> {
  checkOptions(options);
  const listed = await client.listTools(undefined, { cacheMode: 'refresh' });
  const wanted = options.include === undefined ? undefined : new Set(options.include);
  const usable: ListedTool[] = [];
  for (const raw of listed.tools as readonly unknown[]) {
    const tool = readTool(raw);
    const label = typeof tool === 'string' ? String((raw as { name?: unknown } | null)?.name ?? '?') : tool.name;
    if (typeof tool === 'string') options.onSkip?.(label, tool);
    else if (wanted === undefined || wanted.has(tool.name)) usable.push(tool);
  }
  const names = toolNames(
    options.server,
    usable.map((t) => t.name),
    options.taken ?? new Set(),
  );
  const tools: ToolDefinition<JsonObject>[] = [];
  const info: McpToolInfo[] = [];
  usable.forEach((tool, index) => {
    const name = names[index] as string;
    try {
      tools.push(define(client, options, name, tool));
    } catch (error) {
      options.onSkip?.(tool.name, skipReason(options.server, tool.name, error));
      return;
    }
    info.push({
      name,
      server: options.server,
      tool: tool.name,
      fingerprint: toolFingerprint(tool.inputSchema, tool.annotations),
    });
  });
  return { tools, info };
}

/**
 * The tools of a connected MCP server as turnkit tool definitions: pass them to `runTurn` with
 * your own tools. Names are `<server>__<tool>` (made safe and unique); every tool needs approval
 * unless `trusted` is set and the server marks it read-only.
 *
 * @example
 * const tools = await mcpTools(client, { server: 'weather' });
 * const result = await runTurn({ model, tools: [...tools, add], input });
 */
export async function mcpTools(client: Client, options: McpToolsOptions): Promise<readonly ToolDefinition<any>[]> {
  return (await mcpToolSet(client, options)).tools;
}
