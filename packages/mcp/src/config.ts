// Server configuration: plain JSON (a command line for stdio, a URL for Streamable HTTP) that a
// suspended turn can be saved with and reconnected from. It may come from a file, so every field
// is checked, and a mistake is a TypeError naming it.

import { SERVER_NAME } from './names.js';

interface Common {
  /** Trust the server's annotations (read-only tools then run without approval). Default false. */
  readonly trusted?: boolean;
  /** Deadline of each call, in ms. */
  readonly timeoutMs?: number;
  /** Only these tools (as the server names them). */
  readonly include?: readonly string[];
}

/** A server started as a child process, spoken to over stdio. */
export interface McpStdioServer extends Common {
  readonly command: string;
  readonly args?: readonly string[];
  /** Variables for the child, added to the SDK's default environment (a safe subset of this process's: PATH, HOME, …). */
  readonly env?: { readonly [name: string]: string };
  readonly cwd?: string;
}

/** A server reached over Streamable HTTP. */
export interface McpHttpServer extends Common {
  readonly url: string;
  readonly headers?: { readonly [name: string]: string };
}

export type McpServerConfig = McpStdioServer | McpHttpServer;

/** Servers by name; the name prefixes their tools (`<name>__<tool>`). */
export interface McpServers {
  readonly [server: string]: McpServerConfig;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function stringArray(value: unknown, where: string): void {
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string'))
    throw new TypeError(`${where} must be an array of strings.`);
}

function stringRecord(value: unknown, where: string): void {
  if (!isRecord(value) || Object.values(value).some((v) => typeof v !== 'string'))
    throw new TypeError(`${where} must be an object of string values.`);
}

const STDIO_KEYS = new Set(['command', 'args', 'env', 'cwd', 'trusted', 'timeoutMs', 'include']);
const HTTP_KEYS = new Set(['url', 'headers', 'trusted', 'timeoutMs', 'include']);

function checkServer(name: string, value: unknown, where: string): void {
  const at = `${where}.${name}`;
  if (!SERVER_NAME.test(name))
    throw new TypeError(
      `${where}: server name ${JSON.stringify(name.slice(0, 60))} is invalid: use 1 to 32 letters, digits, '_' or '-'.`,
    );
  if (!isRecord(value)) throw new TypeError(`${at} must be an object with a command (stdio) or a url (HTTP).`);
  const stdio = 'command' in value;
  if (stdio === 'url' in value)
    throw new TypeError(`${at} needs exactly one of command (a stdio server) and url (an HTTP server).`);
  const known = stdio ? STDIO_KEYS : HTTP_KEYS;
  for (const key of Object.keys(value))
    if (!known.has(key)) throw new TypeError(`${at} has an unknown field '${key}'. Known fields: ${[...known].join(', ')}.`);
  if (stdio) {
    if (typeof value['command'] !== 'string' || value['command'] === '')
      throw new TypeError(`${at}.command must be a non-empty string.`);
    if (value['args'] !== undefined) stringArray(value['args'], `${at}.args`);
    if (value['env'] !== undefined) stringRecord(value['env'], `${at}.env`);
    if (value['cwd'] !== undefined && typeof value['cwd'] !== 'string') throw new TypeError(`${at}.cwd must be a string.`);
  } else {
    const url = value['url'];
    if (typeof url !== 'string' || !URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol))
      throw new TypeError(`${at}.url must be an http:// or https:// URL, got ${JSON.stringify(String(url)).slice(0, 80)}.`);
    if (value['headers'] !== undefined) stringRecord(value['headers'], `${at}.headers`);
  }
  if (value['trusted'] !== undefined && typeof value['trusted'] !== 'boolean')
    throw new TypeError(`${at}.trusted must be a boolean.`);
  const timeout = value['timeoutMs'];
  if (timeout !== undefined && (typeof timeout !== 'number' || !Number.isInteger(timeout) || timeout < 1))
    throw new TypeError(`${at}.timeoutMs must be a whole number of milliseconds >= 1.`);
  if (value['include'] !== undefined) stringArray(value['include'], `${at}.include`);
}

/** Checks a servers object (say, read from a scenario file); throws a TypeError naming the bad field. */
export function checkMcpServers(value: unknown, where = 'mcpServers'): McpServers {
  if (!isRecord(value)) throw new TypeError(`${where} must be an object of servers by name.`);
  for (const [name, server] of Object.entries(value)) checkServer(name, server, where);
  return value as McpServers;
}
