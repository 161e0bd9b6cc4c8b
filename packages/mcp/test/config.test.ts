// Server configuration may come from a file: each mistake is a TypeError naming the field.
import { checkMcpServers, connectMcpServers } from '@turnkit/mcp';
import { describe, expect, it } from 'vitest';

describe('checkMcpServers', () => {
  it.each([
    [[], 'mcpServers must be an object of servers by name.'],
    [{ 'a b': { command: 'x' } }, `mcpServers: server name "a b" is invalid: use 1 to 32 letters, digits, '_' or '-'.`],
    [{ s: 'node' }, 'mcpServers.s must be an object with a command (stdio) or a url (HTTP).'],
    [{ s: {} }, 'mcpServers.s needs exactly one of command (a stdio server) and url (an HTTP server).'],
    [{ s: { command: '' } }, 'mcpServers.s.command must be a non-empty string.'],
    [{ s: { command: 'node', args: 'server.js' } }, 'mcpServers.s.args must be an array of strings.'],
    [{ s: { command: 'node', env: { A: 1 } } }, 'mcpServers.s.env must be an object of string values.'],
    [{ s: { url: 'file:///etc/passwd' } }, 'mcpServers.s.url must be an http:// or https:// URL, got "file:///etc/passwd".'],
    [{ s: { url: 'http://127.0.0.1/', trusted: 'yes' } }, 'mcpServers.s.trusted must be a boolean.'],
    [{ s: { url: 'http://127.0.0.1/', timeoutMs: 0 } }, 'mcpServers.s.timeoutMs must be a whole number of milliseconds >= 1.'],
    [
      { s: { url: 'http://127.0.0.1/', command: 'node' } },
      'mcpServers.s needs exactly one of command (a stdio server) and url (an HTTP server).',
    ],
    [
      { s: { url: 'http://127.0.0.1/', cwd: '/' } },
      "mcpServers.s has an unknown field 'cwd'. Known fields: url, headers, trusted, timeoutMs, include.",
    ],
  ])('%j: %s', (value, message) => {
    expect(() => checkMcpServers(value)).toThrow(new TypeError(message));
  });

  it('accepts a stdio and an HTTP server', () => {
    const servers = { files: { command: 'node', args: ['server.js'], trusted: true }, docs: { url: 'https://example.com/mcp' } };
    expect(checkMcpServers(servers)).toBe(servers);
  });

  it('a malformed snapshot is refused before anything connects', async () => {
    await expect(connectMcpServers({}, { since: { tools: { a: 1 }, parked: [] } })).rejects.toThrow(
      'connectMcpServers: since.tools must be an object of fingerprints (strings) by tool name.',
    );
  });
});
