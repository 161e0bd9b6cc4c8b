// The HTTP API under /api: the store's operations (submit, list, get, watch, decide, cancel; list,
// get, watch and close threads) and nothing more, each route declared once with zod schemas; the OpenAPI description at
// /api/openapi.json is generated from these declarations.

import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import type { ApprovalDecision, TurnLimitsInput } from '@turnkit/core';
import { definedProps } from '@turnkit/core/internal';
import {
  CallAlreadyDecidedError,
  type StoreClient,
  ThreadBusyError,
  ThreadClosedError,
  ThreadNotFoundError,
  TurnExistsError,
  TurnNotFoundError,
  TurnNotWaitingError,
  UnknownCallError,
} from '@turnkit/store';
import { type ApiError, callerError, errorReply, validationError } from './errors.js';
import { jsonMessage, jsonThreadMessage, placed, startAfter, watchStream } from './events.js';
import {
  CancelBody,
  Cancelled,
  CloseBody,
  Closed,
  DecideBody,
  Decided,
  Decision,
  ErrorBody,
  EventsHeaders,
  EventsQuery,
  ListQuery,
  StoredThread,
  StoredTurn,
  Submitted,
  SubmitBody,
  ThreadPage,
  ThreadParams,
  ThreadQuery,
  TurnPage,
  TurnParams,
  ThreadStreamEvent,
  TurnStreamEvent,
} from './schemas.js';
import { asSent } from './shapes.js';

const json = <T extends z.ZodType>(schema: T, description: string) => ({
  content: { 'application/json': { schema } },
  description,
});
const body = <T extends z.ZodType>(schema: T, required = true) => ({
  body: { content: { 'application/json': { schema } }, required },
});
/** What every route may answer besides its own replies (GET routes take no body). */
const errors = {
  400: json(ErrorBody, 'The request is malformed; the error names the field.'),
  401: json(ErrorBody, 'No bearer token, or the wrong one.'),
  500: json(ErrorBody, "The server failed; the error went to the server's onError."),
};
/** What a route with a JSON body may also answer. */
const bodyErrors = {
  ...errors,
  413: json(ErrorBody, "The body is over the size limit (the server's maxBodyBytes, 256 KiB by default)."),
  415: json(ErrorBody, 'The body is not sent as JSON (its content-type is not application/json).'),
};
const security = [{ bearer: [] }];

export const routes = {
  submit: createRoute({
    operationId: 'submitTurn',
    method: 'post',
    path: '/turns',
    summary: 'Queue a turn for a worker that has its agent.',
    security,
    request: body(SubmitBody),
    responses: {
      201: json(Submitted, 'Queued.'),
      409: json(
        ErrorBody,
        'A turn with that id exists (`conflict`), the thread is closed (`thread_closed`), or, with `whenBusy: refuse`, a turn of the thread has not ended (`thread_busy`).',
      ),
      ...bodyErrors,
    },
  }),
  list: createRoute({
    operationId: 'listTurns',
    method: 'get',
    path: '/turns',
    summary: 'List turns, oldest first; pass `cursor` back for the next page.',
    security,
    request: { query: ListQuery },
    responses: { 200: json(TurnPage, 'A page of turns.'), ...errors },
  }),
  get: createRoute({
    operationId: 'getTurn',
    method: 'get',
    path: '/turns/{id}',
    summary: 'One turn: status, state, transcript, parked calls, decisions, tool journal, outcome.',
    security,
    request: { params: TurnParams },
    responses: { 200: json(StoredTurn, 'The turn.'), 404: json(ErrorBody, 'No such turn.'), ...errors },
  }),
  events: createRoute({
    operationId: 'streamTurn',
    method: 'get',
    path: '/turns/{id}/events',
    summary: 'The turn as server-sent events: its history, then what happens, until it ends.',
    description:
      "Events `message`, `notice` and `status` (data: the store's watch event as JSON, id: its seq), then `end`. Resume with `after` or the Last-Event-ID header.",
    security,
    request: { params: TurnParams, query: EventsQuery, headers: EventsHeaders },
    responses: {
      200: { content: { 'text/event-stream': { schema: TurnStreamEvent } }, description: 'An event stream.' },
      404: json(ErrorBody, 'No such turn.'),
      ...errors,
    },
  }),
  decide: createRoute({
    operationId: 'decideCalls',
    method: 'post',
    path: '/turns/{id}/decisions',
    summary: 'Decide parked calls: approve, approve and remember, or reject with a reason.',
    security,
    request: { params: TurnParams, ...body(DecideBody) },
    responses: {
      200: json(Decided, 'Durable: every decision given was stored (all or nothing).'),
      404: json(ErrorBody, 'No such turn.'),
      409: json(
        ErrorBody,
        'Nothing was stored: the turn is not waiting for approval (`not_waiting`), has not parked a call given (`unknown_call`), or a call given has a decision already (`already_decided`).',
      ),
      ...bodyErrors,
    },
  }),
  cancel: createRoute({
    operationId: 'cancelTurn',
    method: 'post',
    path: '/turns/{id}/cancel',
    summary: 'Ask for the turn to be cancelled (false when it has already ended).',
    security,
    request: { params: TurnParams, ...body(CancelBody, false) },
    responses: { 200: json(Cancelled, 'Durable.'), 404: json(ErrorBody, 'No such turn.'), ...bodyErrors },
  }),
  listThreads: createRoute({
    operationId: 'listThreads',
    method: 'get',
    path: '/threads',
    summary: 'List threads by id; pass `cursor` back for the next page.',
    security,
    request: { query: ThreadQuery },
    responses: { 200: json(ThreadPage, 'A page of threads.'), ...errors },
  }),
  getThread: createRoute({
    operationId: 'getThread',
    method: 'get',
    path: '/threads/{id}',
    summary: 'One thread: its turns in order, its transcript, and the parked calls of its current turn.',
    security,
    request: { params: ThreadParams },
    responses: { 200: json(StoredThread, 'The thread.'), 404: json(ErrorBody, 'No such thread.'), ...errors },
  }),
  threadEvents: createRoute({
    operationId: 'streamThread',
    method: 'get',
    path: '/threads/{id}/events',
    summary:
      "The thread as server-sent events: each of its turns' history in order, then what happens, until it is closed and its last turn ended.",
    description:
      "Events `message`, `notice` and `status` (data: the store's thread watch event as JSON, with its `turnId`; id: its place in the thread's stream, from 1), then `end`. Resume with `after` (a place) or the Last-Event-ID header.",
    security,
    request: { params: ThreadParams, query: EventsQuery, headers: EventsHeaders },
    responses: {
      200: { content: { 'text/event-stream': { schema: ThreadStreamEvent } }, description: 'An event stream.' },
      404: json(ErrorBody, 'No such thread.'),
      ...errors,
    },
  }),
  closeThread: createRoute({
    operationId: 'closeThread',
    method: 'post',
    path: '/threads/{id}/close',
    summary:
      'Close a thread: no more turns, its grants end, its turns that have not ended are cancelled (false when closed already).',
    security,
    request: { params: ThreadParams, ...body(CloseBody, false) },
    responses: { 200: json(Closed, 'Durable.'), 404: json(ErrorBody, 'No such thread.'), ...bodyErrors },
  }),
} as const;

const notFound = (c: Parameters<typeof errorReply>[0], id: string) =>
  errorReply(c, 404, { code: 'not_found', message: `There is no turn '${id}'; list turns with GET /api/turns.` });
const threadNotFound = (c: Parameters<typeof errorReply>[0], id: string) =>
  errorReply(c, 404, { code: 'not_found', message: `There is no thread '${id}'; list threads with GET /api/threads.` });

/** A store error's message without its method, as a sentence. */
const told = (e: Error): string => {
  const text = e.message.replace(/^store\.[a-zA-Z]+: /, '');
  return text.charAt(0).toUpperCase() + text.slice(1);
};

/** The API routes (mounted under /api by the server, which adds the token check and body limit). */
export function createApi(store: StoreClient, options: { readonly pollMs: number }): OpenAPIHono {
  const api = new OpenAPIHono({
    defaultHook: (result, c) => {
      if (!result.success) return errorReply(c, 400, validationError(result.target, result.error));
      return undefined;
    },
  });
  api.openAPIRegistry.registerComponent('securitySchemes', 'bearer', { type: 'http', scheme: 'bearer' });

  api.openapi(routes.submit, async (c) => {
    const submit = c.req.valid('json');
    const exists = (id: string) =>
      errorReply(c, 409, {
        code: 'conflict',
        message: `A turn with id '${id}' exists; pick another id or leave id out.`,
        field: 'body.id',
      });
    if (submit.id !== undefined && (await store.get(submit.id)) !== null) return exists(submit.id);
    try {
      // The store checks the limits (a RangeError naming a bad one becomes a 400).
      const limits = submit.limits as TurnLimitsInput | undefined;
      const options = definedProps({
        input: submit.input,
        id: submit.id,
        limits,
        thread: submit.thread,
        whenBusy: submit.whenBusy,
      });
      return c.json({ id: await store.submit({ agent: submit.agent, ...options }) }, 201);
    } catch (error) {
      // Requests racing with one id all pass the look above; the store refuses all but the first.
      if (error instanceof TurnExistsError) return exists(error.turnId);
      if (error instanceof ThreadBusyError)
        return errorReply(c, 409, { code: 'thread_busy', message: told(error), field: 'body.thread' });
      if (error instanceof ThreadClosedError)
        return errorReply(c, 409, { code: 'thread_closed', message: told(error), field: 'body.thread' });
      return errorReply(c, 400, callerError(error));
    }
  });

  api.openapi(routes.list, async (c) => {
    const { status, limit, cursor } = c.req.valid('query');
    try {
      const page = await store.list(definedProps({ status, limit, cursor }));
      return c.json({ turns: [...page.turns], cursor: page.cursor }, 200);
    } catch (error) {
      return errorReply(c, 400, callerError(error));
    }
  });

  api.openapi(routes.get, async (c) => {
    const { id } = c.req.valid('param');
    const turn = await store.get(id);
    return turn === null ? notFound(c, id) : c.json(asSent(turn), 200);
  });

  api.openapi(routes.events, async (c) => {
    const { id } = c.req.valid('param');
    if ((await store.get(id)) === null) return notFound(c, id);
    const after = startAfter(c, c.req.valid('query').after);
    return watchStream(c, (signal) => store.watch(id, { after, pollMs: options.pollMs, signal }), jsonMessage, options.pollMs);
  });

  api.openapi(routes.decide, async (c) => {
    const { id } = c.req.valid('param');
    const decisions = ownDecisions((await c.req.json()) as { decisions: Record<string, unknown> });
    if (!(decisions instanceof Map)) return errorReply(c, 400, decisions);
    try {
      const result = await store.decide(id, Object.fromEntries(decisions));
      return c.json({ accepted: [...result.accepted], ignored: [...result.ignored] }, 200);
    } catch (error) {
      // The store decides what a decision may change; its refusal is the answer (rethrown: a 500).
      const problem = decideProblem(error);
      return errorReply(c, problem.status, problem.error);
    }
  });

  api.openapi(routes.cancel, async (c) => {
    const { id } = c.req.valid('param');
    if ((await store.get(id)) === null) return notFound(c, id);
    return c.json({ cancelled: await store.cancel(id, c.req.valid('json').reason) }, 200);
  });

  api.openapi(routes.listThreads, async (c) => {
    const { limit, cursor } = c.req.valid('query');
    const page = await store.listThreads(definedProps({ limit, cursor }));
    return c.json({ threads: [...page.threads], cursor: page.cursor }, 200);
  });

  api.openapi(routes.getThread, async (c) => {
    const { id } = c.req.valid('param');
    const thread = await store.get({ thread: id });
    return thread === null ? threadNotFound(c, id) : c.json(asSent(thread), 200);
  });

  api.openapi(routes.threadEvents, async (c) => {
    const { id } = c.req.valid('param');
    if ((await store.get({ thread: id })) === null) return threadNotFound(c, id);
    const after = startAfter(c, c.req.valid('query').after);
    const watch = (signal: AbortSignal) => placed(store.watch({ thread: id }, { pollMs: options.pollMs, signal }), after);
    return watchStream(c, watch, jsonThreadMessage, options.pollMs);
  });

  api.openapi(routes.closeThread, async (c) => {
    const { id } = c.req.valid('param');
    try {
      return c.json({ closed: await store.closeThread(id, c.req.valid('json').reason) }, 200);
    } catch (error) {
      if (error instanceof ThreadNotFoundError) return threadNotFound(c, id);
      throw error;
    }
  });

  api.doc31('/openapi.json', {
    openapi: '3.1.0',
    info: {
      title: 'turnkit server',
      version: '1',
      description: 'Durable turns over HTTP. Every route needs `Authorization: Bearer <token>`.',
    },
    servers: [{ url: '/api' }],
  });
  return api;
}

/**
 * The decisions as own keys, read from the raw JSON again: zod's record output drops a `__proto__`
 * key, and any string core accepts is a call id. Every value is checked (the route checked the rest).
 */
function ownDecisions(raw: { decisions: Record<string, unknown> }): Map<string, ApprovalDecision> | ApiError {
  const decisions = new Map<string, ApprovalDecision>();
  for (const [callId, value] of Object.entries(raw.decisions)) {
    const parsed = Decision.safeParse(value);
    if (!parsed.success)
      return validationError(
        'json',
        new z.ZodError(parsed.error.issues.map((i) => ({ ...i, path: ['decisions', callId, ...i.path] }))),
      );
    decisions.set(callId, parsed.data as ApprovalDecision);
  }
  if (decisions.size === 0)
    return { code: 'invalid_body', message: 'body.decisions: decide at least one call.', field: 'body.decisions' };
  return decisions;
}

/**
 * The answer to a refusal of `store.decide` (404 for no such turn, 409 for a turn not waiting, a
 * call it has not parked or one decided already), with the store's message; anything else is rethrown.
 */
function decideProblem(error: unknown): { status: 404 | 409; error: ApiError } {
  const told = (e: Error): string => {
    const text = e.message.replace(/^store\.decide: /, '');
    return text.charAt(0).toUpperCase() + text.slice(1);
  };
  if (error instanceof TurnNotFoundError)
    return {
      status: 404,
      error: { code: 'not_found', message: `There is no turn '${error.turnId}'; list turns with GET /api/turns.` },
    };
  if (error instanceof TurnNotWaitingError) return { status: 409, error: { code: 'not_waiting', message: told(error) } };
  if (error instanceof UnknownCallError)
    return { status: 409, error: { code: 'unknown_call', message: told(error), field: 'body.decisions' } };
  if (error instanceof CallAlreadyDecidedError)
    return { status: 409, error: { code: 'already_decided', message: told(error), field: 'body.decisions' } };
  throw error;
}
