// The server: the API under /api (bearer token, JSON, OpenAPI) and the console under /console
// (signed-in session, forms with CSRF tokens), on one Hono app. `serve` listens on 127.0.0.1 by
// default.

import type { AddressInfo } from 'node:net';
import { serve as listen } from '@hono/node-server';
import type { StoreClient } from '@turnkit/store';
import { Hono } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { secureHeaders } from 'hono/secure-headers';
import { createApi } from './api.js';
import { bodyLimit } from './body.js';
import { createConsole } from './console/app.js';
import { errorReply } from './errors.js';
import { type TokenCheck, tokenCheck, tokenMatches } from './token.js';

/**
 * What the API and the console need: the store they serve and the token that guards them, with limits and an error
 * observer.
 */
export interface ServerOptions {
  /** The store whose turns the API and the console show and act on (`openStore`'s client, or another `StoreClient`). */
  readonly store: StoreClient;
  /** The bearer token, or its check (from `loadToken`). */
  readonly token: string | TokenCheck;
  /** Largest API request body in bytes. Default 262144 (256 KiB); console forms get 16 KiB. */
  readonly maxBodyBytes?: number;
  /** How often live views look for news in the store. Default 250. */
  readonly pollMs?: number;
  /** How long a console sign-in lasts. Default 12 hours. */
  readonly sessionTtlMs?: number;
  /** Hears errors the server answered with a 500 (the reply says only that something failed). */
  readonly onError?: (error: unknown) => void;
}

const bearer = (header: string | undefined): string | null => {
  const match = /^Bearer ([\x21-\x7e]+)$/.exec(header ?? '');
  return match?.[1] ?? null;
};

/** The Hono app: mount it anywhere, or `serve` it. */
export function createServer(options: ServerOptions): Hono {
  const token = typeof options.token === 'string' ? tokenCheck(options.token) : options.token;
  const pollMs = options.pollMs ?? 250;
  const maxBodyBytes = options.maxBodyBytes ?? 256 * 1024;
  const app = new Hono();
  app.use(
    '*',
    secureHeaders({
      contentSecurityPolicy: {
        defaultSrc: ["'none'"],
        scriptSrc: ["'self'"],
        styleSrc: ["'self'"],
        imgSrc: ["'self'"],
        connectSrc: ["'self'"],
        formAction: ["'self'"],
        baseUri: ["'none'"],
        frameAncestors: ["'none'"],
      },
      referrerPolicy: 'no-referrer',
    }),
  );

  app.use('/api/*', async (c, next) => {
    if (!tokenMatches(token, bearer(c.req.header('authorization')))) {
      c.header('WWW-Authenticate', 'Bearer realm="turnkit"');
      return errorReply(c, 401, {
        code: 'unauthorized',
        message: 'Send the server token as `Authorization: Bearer <token>` (never in the URL).',
      });
    }
    await next();
  });
  app.use(
    '/api/*',
    bodyLimit(maxBodyBytes, (c) =>
      errorReply(c, 413, {
        code: 'body_too_large',
        message: `The body is over ${maxBodyBytes} bytes; send less (the limit is the server's maxBodyBytes).`,
      }),
    ),
  );
  app.route('/api', createApi(options.store, { pollMs }));

  app.use(
    '/console/*',
    bodyLimit(16 * 1024, (c) =>
      c.text('The form is over 16 KiB; send a shorter one (a reason is at most 2000 characters).', 413),
    ),
  );
  app.route(
    '/console',
    createConsole({ store: options.store, token, pollMs, sessionTtlMs: options.sessionTtlMs ?? 12 * 3600_000 }),
  );
  app.get('/', (c) => c.redirect('/console', 302));

  app.notFound((c) =>
    c.req.path.startsWith('/api/')
      ? errorReply(c, 404, { code: 'not_found', message: `No route ${c.req.method} ${c.req.path}; see /api/openapi.json.` })
      : c.text('Not found.', 404),
  );
  app.onError((error, c) => {
    // Hono's own 4xx (a body that is not JSON, say) are the caller's fault: said as such, not reported.
    if (error instanceof HTTPException && error.status === 415)
      return errorReply(c, 415, {
        code: 'unsupported_media_type',
        message: `The body's content-type is ${JSON.stringify(c.req.header('content-type') ?? '')}, not JSON; send a JSON body with content-type application/json (see /api/openapi.json).`,
      });
    if (error instanceof HTTPException && error.status < 500)
      return errorReply(c, error.status as ContentfulStatusCode, {
        code: 'bad_request',
        message: `${error.message || 'The request is malformed'}; send a JSON body with content-type application/json (see /api/openapi.json).`,
      });
    options.onError?.(error);
    return errorReply(c, 500, { code: 'internal', message: 'The server failed to answer; the error went to its onError.' });
  });
  return app;
}

/** The options of `serve`: the server's (store, token, limits) and where to listen. */
export interface ServeOptions extends ServerOptions {
  /** The address to listen on. Default 127.0.0.1 (this machine only). */
  readonly host?: string;
  /** The port to listen on. Default 0: a free port (read it from `RunningServer.port`). */
  readonly port?: number;
}

/** A listening server, as `serve` returns it. */
export interface RunningServer {
  /** The base URL of the API and the console, e.g. http://127.0.0.1:4700. */
  readonly url: string;
  /** The address it listens on. */
  readonly host: string;
  /** The port it listens on (the one chosen when `port` was 0). */
  readonly port: number;
  /** Stops listening and ends open streams. */
  close(): Promise<void>;
}

/** Starts the server on `host:port` (127.0.0.1 and a free port by default). */
export async function serve(options: ServeOptions): Promise<RunningServer> {
  const app = createServer(options);
  const host = options.host ?? '127.0.0.1';
  const server = await new Promise<ReturnType<typeof listen>>((resolve, reject) => {
    const s = listen({ fetch: app.fetch, hostname: host, port: options.port ?? 0 }, () => resolve(s));
    s.once('error', reject);
  });
  // Idle keep-alive sockets stay open a minute (Node's default is 5 s): a client that reuses one just
  // as the server drops it gets a reset, which a busy process makes likely with a short timeout.
  if ('keepAliveTimeout' in server) server.keepAliveTimeout = 60_000;
  const { port } = server.address() as AddressInfo;
  const shown = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${shown}:${port}`,
    host,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        if ('closeAllConnections' in server) server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
