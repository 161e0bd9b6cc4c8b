// Request bodies over a size limit get a 413 on every request of a keep-alive connection: the
// rest of an oversized body is read and dropped before the answer (up to a cap), so the next
// request on the connection is read from its start. A body larger than the cap is not read; its
// 413 closes the connection.

import type { Context, MiddlewareHandler } from 'hono';

/** Reads the body (at most `maxSize` bytes are kept) and answers `tooLarge` when it is over. */
export function bodyLimit(maxSize: number, tooLarge: (c: Context) => Response | Promise<Response>): MiddlewareHandler {
  // How much of an oversized body is read away to keep the connection usable.
  const drainCap = Math.max(4 * maxSize, 1024 * 1024);
  return async (c, next) => {
    const body = c.req.raw.body;
    if (body === null) return next();
    const declared = Number(c.req.header('content-length') ?? Number.NaN);
    if (declared > drainCap) {
      c.header('Connection', 'close');
      return tooLarge(c);
    }
    const reader = body.getReader();
    const chunks: Uint8Array[] = [];
    let size = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > maxSize) break;
      chunks.push(value);
    }
    if (size <= maxSize) {
      c.req.raw = new Request(c.req.raw, { body: Buffer.concat(chunks) });
      return next();
    }
    while (size <= drainCap) {
      const { done, value } = await reader.read();
      if (done) return tooLarge(c);
      size += value.byteLength;
    }
    await reader.cancel().catch(() => undefined);
    c.header('Connection', 'close');
    return tooLarge(c);
  };
}
