// The MCP servers a scenario names: connected when a run or a resume starts (a resume reconnects
// from the scenario's configuration and compares each tool's fingerprint with the one saved when
// the turn suspended), their tools added to the scenario's, closed when the turn returns. @turnkit/mcp is an optional peer: loaded only for a scenario that names servers.

import { dirname } from 'node:path';
import type { ParkedCall } from '@turnkit/core';
import type { ToolDefinition } from '@turnkit/dispatch';
import { oneLine, UsageError } from './errors.js';
import type { LoadedScenarioFile } from './scenario.js';
import type { SavedMcp } from './suspended.js';

export interface ScenarioServers {
  // any: each tool has its own input type.
  readonly tools: readonly ToolDefinition<any>[];
  /** MCP tools whose input schema or annotations changed (or that are gone) since the turn was saved. */
  readonly changed: readonly string[];
  /** What to save with a suspended turn (undefined when the scenario names no MCP server). */
  snapshot(pending: readonly ParkedCall[]): SavedMcp | undefined;
  close(): Promise<void>;
}

const NONE: ScenarioServers = { tools: [], changed: [], snapshot: () => undefined, close: async () => undefined };

/** Connects the scenario's MCP servers; a UsageError names the scenario when that is not possible. */
export async function connectScenarioServers(
  scenario: LoadedScenarioFile,
  shown: string,
  since?: SavedMcp,
): Promise<ScenarioServers> {
  if (scenario.mcpServers === undefined) return NONE;
  let mcp: typeof import('@turnkit/mcp');
  try {
    mcp = await import('@turnkit/mcp');
  } catch (error) {
    throw new UsageError(
      `Scenario ${shown} names MCP servers, but @turnkit/mcp could not be loaded (${oneLine(error)}): install it with \`npm i @turnkit/mcp @modelcontextprotocol/client\`.`,
    );
  }
  try {
    const servers = mcp.checkMcpServers(scenario.mcpServers, 'mcpServers');
    // A stdio server starts in the scenario's folder unless it names its own cwd.
    const here = dirname(scenario.path);
    const placed = Object.fromEntries(
      Object.entries(servers).map(([name, server]) => [
        name,
        'command' in server && server.cwd === undefined ? { ...server, cwd: here } : server,
      ]),
    );
    return await mcp.connectMcpServers(placed, { clientName: 'turnkit-cli', ...(since === undefined ? {} : { since }) });
  } catch (error) {
    throw new UsageError(`Scenario ${shown}: ${oneLine(error)}`);
  }
}
