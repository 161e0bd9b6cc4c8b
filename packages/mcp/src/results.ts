// What an MCP tool call returns, as a turnkit tool result. A result the server marks `isError`
// and a protocol error (unknown tool, timeout, a broken connection) are thrown as a ToolError of
// the matching kind, which the dispatcher turns into an error result the model sees (with that
// `errorKind`); nothing here escapes a turn.

import { ToolError } from '@turnkit/dispatch';

const MAX_SUMMARY = 200;

function str(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** One content part as text: text as is, anything else summarised in brackets. */
function partText(part: unknown): string {
  if (part === null || typeof part !== 'object') return `[unreadable content part: ${typeof part}]`;
  const p = part as Record<string, unknown>;
  switch (p['type']) {
    case 'text':
      return str(p['text']);
    case 'image':
    case 'audio': {
      const data = str(p['data']);
      return `[${p['type']} ${str(p['mimeType']) || 'of unknown type'}, ${Math.floor((data.length * 3) / 4)} bytes]`;
    }
    case 'resource': {
      const r = (p['resource'] ?? {}) as Record<string, unknown>;
      const text = str(r['text']);
      return text === ''
        ? `[resource ${str(r['uri'])}${r['mimeType'] ? ` (${str(r['mimeType'])})` : ''}]`
        : `[resource ${str(r['uri'])}]\n${text}`;
    }
    case 'resource_link':
      return `[resource link ${str(p['uri'])}${p['name'] ? ` (${str(p['name'])})` : ''}]`;
    default:
      return `[${String(p['type']).slice(0, MAX_SUMMARY)} content]`;
  }
}

/** Text parts joined with newlines, other parts summarised. */
export function contentText(content: unknown): string {
  if (!Array.isArray(content)) return '';
  return content.map(partText).join('\n');
}

/**
 * The output of a successful call: the structured content when the server sent it, else the
 * content as text. Throws a ToolError (kind `tool_error`) for an `isError` result.
 */
export function resultOutput(result: unknown, server: string, tool: string): unknown {
  const r = (result ?? {}) as Record<string, unknown>;
  const structured = r['structuredContent'];
  const hasStructured = structured !== null && typeof structured === 'object';
  if (r['isError'] === true) {
    const text = contentText(r['content']) || (hasStructured ? JSON.stringify(structured) : 'no details given');
    throw new ToolError(`MCP server '${server}' reported an error from '${tool}': ${text}`, { kind: 'tool_error' });
  }
  if (hasStructured) return structured;
  return contentText(r['content']);
}

/** A thrown protocol error (the SDK's ProtocolError or SdkError) as a ToolError. */
export function protocolError(error: unknown, server: string, tool: string, signal: AbortSignal): unknown {
  // A cancel or the dispatcher's timeout aborted the request: the dispatcher reports it itself.
  if (signal.aborted) return error;
  const e = (error ?? {}) as { code?: unknown; message?: unknown };
  const message = typeof e.message === 'string' ? e.message : String(error);
  if (e.code === -32602 && /not found|unknown tool/i.test(message))
    return new ToolError(
      `MCP server '${server}' has no tool '${tool}' any more (${message}). Its tool list changed; use the tools offered now.`,
      {
        kind: 'unknown_tool',
        cause: error,
      },
    );
  if (e.code === 'REQUEST_TIMEOUT' || /timed out/i.test(message))
    return new ToolError(`MCP server '${server}' did not answer '${tool}' in time (${message}).`, {
      kind: 'timeout',
      cause: error,
    });
  return new ToolError(`MCP server '${server}' failed to run '${tool}': ${message}`, { kind: 'tool_error', cause: error });
}
