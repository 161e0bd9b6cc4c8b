// The console's routes under /console: sign-in, the list (live), a turn's page (live), a thread's
// page (live), and the decision and cancel forms. Forms are protected against cross-site requests
// three ways: the session cookie is SameSite=Strict, the Origin must be this server's, and every
// form carries the session's CSRF token.

import type { ApprovalDecision } from '@turnkit/core';
import { definedProps } from '@turnkit/core/internal';
import {
  CallAlreadyDecidedError,
  type StoreClient,
  type StoredStatus,
  TurnNotFoundError,
  TurnNotWaitingError,
  type TurnSummary,
  UnknownCallError,
  type WatchEvent,
} from '@turnkit/store';
import { type Context, Hono } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { csrf } from 'hono/csrf';
import { type SSEMessage, streamSSE } from 'hono/streaming';
import { z } from 'zod';
import { html } from '../html.js';
import { STATUSES } from '../schemas.js';
import type { TokenCheck } from '../token.js';
import { tokenMatches } from '../token.js';
import { CONSOLE_CSS, CONSOLE_ICON, CONSOLE_JS } from './assets.js';
import { turnDiagram } from './diagram.js';
import { listBody, listRows, loginPage, page, type RowDetail, WAITING_CAP, waitingBadge } from './pages.js';
import { timelineItem, transcriptItem } from './parts.js';
import { csrfMatches, SESSION_COOKIE, type Session, Sessions } from './sessions.js';
import { diagramState } from './diagram.js';
import { threadBody, threadPanels, threadsBody } from './thread-page.js';
import { rejectPage, turnBody, turnPanels } from './turn-page.js';
import { startAfter, watchStream } from '../events.js';

export interface ConsoleOptions {
  readonly store: StoreClient;
  readonly token: TokenCheck;
  readonly pollMs: number;
  readonly sessionTtlMs: number;
}

type Env = { Variables: { session: Session } };

const DecideForm = z.object({
  csrf: z.string(),
  call: z.string().min(1).max(256),
  action: z.enum(['approve', 'approve_always', 'reject']),
  reason: z.string().max(2000).optional(),
});
const CancelForm = z.object({ csrf: z.string(), reason: z.string().max(2000).optional() });
const ListQuery = z.object({
  status: z.enum(STATUSES as [StoredStatus, ...StoredStatus[]]).optional(),
  cursor: z
    .string()
    .regex(/^\d{1,20}$/)
    .optional(),
});

const problem = (c: Context, status: 400 | 403 | 404 | 409, message: string) =>
  c.html(
    page(
      { title: 'Not done' },
      html`<section class="card"><h1>Not done</h1><p class="error" role="alert">${message}</p><p><a href="/console">Back to the turns</a></p></section>`,
    ),
    status,
  );

export function createConsole(options: ConsoleOptions): Hono<Env> {
  const sessions = new Sessions(options.sessionTtlMs);
  const app = new Hono<Env>();
  addAssets(app);
  app.use('*', csrf());
  addSignIn(app, options, sessions);
  addListPages(app, options);
  addTurnPages(app, options);
  addThreadPages(app, options);
  return app;
}

/** The stylesheet, script and icon: served before sign-in. */
function addAssets(app: Hono<Env>): void {
  const diagramCss = turnDiagram().css;
  app.get('/assets/console.css', (c) =>
    c.body(`${CONSOLE_CSS}\n${diagramCss}`, 200, { 'content-type': 'text/css; charset=utf-8', 'cache-control': 'no-cache' }),
  );
  app.get('/assets/console.js', (c) =>
    c.body(CONSOLE_JS, 200, { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'no-cache' }),
  );
  app.get('/assets/icon.svg', (c) =>
    c.body(CONSOLE_ICON, 200, { 'content-type': 'image/svg+xml', 'cache-control': 'max-age=86400' }),
  );
}

/** Sign-in with the server's token, the session every other page needs (with its CSRF check), sign-out. */
function addSignIn(app: Hono<Env>, options: ConsoleOptions, sessions: Sessions): void {
  app.get('/login', (c) => c.html(loginPage(null)));
  app.post('/login', async (c) => {
    const form = await c.req.parseBody();
    if (!tokenMatches(options.token, typeof form.token === 'string' ? form.token : null))
      return c.html(loginPage('That is not the server’s token.'), 401);
    const session = sessions.create();
    setCookie(c, SESSION_COOKIE, session.id, {
      httpOnly: true,
      sameSite: 'Strict',
      path: '/console',
      secure: new URL(c.req.url).protocol === 'https:',
      maxAge: Math.floor(options.sessionTtlMs / 1000),
    });
    return c.redirect('/console', 303);
  });

  app.use('*', async (c, next) => {
    const session = sessions.get(getCookie(c, SESSION_COOKIE));
    if (session === null)
      return c.req.method === 'GET' ? c.redirect('/console/login', 303) : c.html(loginPage('Sign in first.'), 401);
    c.set('session', session);
    if (c.req.method === 'POST') {
      const form = await c.req.parseBody();
      if (!csrfMatches(session, form.csrf))
        return problem(c, 403, 'This form is out of date or did not come from this console; reload the page and try again.');
    }
    await next();
  });

  app.post('/logout', (c) => {
    sessions.delete(c.get('session').id);
    deleteCookie(c, SESSION_COOKIE, { path: '/console' });
    return c.redirect('/console/login', 303);
  });
}

/** The turns on one page of the list, and how many wait for a person. */
async function listView(store: ConsoleOptions['store'], query: z.infer<typeof ListQuery>) {
  const [list, waiting] = await Promise.all([
    store.list({ limit: 50, ...definedProps({ status: query.status, cursor: query.cursor }) }),
    store.list({ status: 'awaiting_approval', limit: WAITING_CAP }),
  ]);
  return { list, waiting: waiting.turns.length };
}

/**
 * Each listed turn's input and parked calls (`store.get` per row). The live list reads them again
 * only when a row changed (its status or last update), not on every poll.
 */
async function rowDetails(store: ConsoleOptions['store'], turns: readonly TurnSummary[]): Promise<Map<string, RowDetail>> {
  const got = await Promise.all(turns.map((t) => store.get(t.id)));
  return new Map(got.flatMap((t) => (t === null ? [] : [[t.id, { input: t.input, asks: t.parked }] as const])));
}

const rowsKey = (turns: readonly TurnSummary[]): string => turns.map((t) => `${t.id} ${t.status} ${t.updatedAt}`).join('\n');

/** The list of turns and its live updates. */
function addListPages(app: Hono<Env>, options: ConsoleOptions): void {
  const { store } = options;
  app.get('/', async (c) => {
    const query = ListQuery.safeParse(c.req.query());
    if (!query.success)
      return problem(c, 400, `The filter ${JSON.stringify(c.req.query())} is not one this console makes; pick one of the links.`);
    const { list, waiting } = await listView(store, query.data);
    const stream = `/console/stream?${new URLSearchParams(c.req.query()).toString()}`;
    const body = listBody({
      turns: list.turns,
      details: await rowDetails(store, list.turns),
      status: query.data.status,
      cursor: query.data.cursor,
      next: list.cursor,
      now: Date.now(),
    });
    return c.html(page({ title: 'Turns', csrf: c.get('session').csrf, waiting, stream }, body));
  });

  app.get('/stream', (c) => {
    const query = ListQuery.safeParse(c.req.query());
    if (!query.success) return c.body(null, 400);
    return streamSSE(c, async (stream) => {
      let aborted = false;
      stream.onAbort(() => {
        aborted = true;
      });
      let last = '';
      let shownKey: string | null = null;
      let details = new Map<string, RowDetail>();
      while (!aborted) {
        const { list, waiting } = await listView(store, query.data);
        const key = rowsKey(list.turns);
        if (key !== shownKey) {
          details = await rowDetails(store, list.turns);
          shownKey = key;
        }
        const panels = JSON.stringify({
          rows: listRows(list.turns, Date.now(), details).value,
          waiting: waitingBadge(waiting).value,
        });
        if (panels !== last) await stream.writeSSE({ event: 'panels', data: panels });
        last = panels;
        await stream.sleep(options.pollMs);
      }
    });
  });
}

/** The threads' list (reload it to see new threads) and a thread's page, live as its turns go on. */
function addThreadPages(app: Hono<Env>, options: ConsoleOptions): void {
  const { store } = options;
  app.get('/threads', async (c) => {
    const cursor = c.req.query('cursor');
    const [list, { waiting }] = await Promise.all([
      store.listThreads({ limit: 50, ...definedProps({ cursor }) }),
      listView(store, {}),
    ]);
    const body = threadsBody(list.threads, list.cursor, Date.now());
    return c.html(page({ title: 'Threads', csrf: c.get('session').csrf, waiting }, body));
  });

  app.get('/threads/:id', async (c) => {
    const thread = await store.get({ thread: c.req.param('id') });
    if (thread === null) return problem(c, 404, `There is no thread '${c.req.param('id')}'.`);
    const { waiting } = await listView(store, {});
    const stream = `/console/threads/${encodeURIComponent(thread.id)}/stream`;
    return c.html(
      page({ title: `Thread ${thread.id}`, csrf: c.get('session').csrf, waiting, stream }, threadBody(thread, Date.now())),
    );
  });

  app.get('/threads/:id/stream', async (c) => {
    const id = c.req.param('id');
    if ((await store.get({ thread: id })) === null) return c.body(null, 404);
    const live = liveThread(store, id, options.pollMs);
    const watch = (signal: AbortSignal) => store.watch({ thread: id }, { pollMs: options.pollMs, signal });
    return watchStream(c, watch, live.event, options.pollMs, live.quiet);
  });
}

/** How many quiet periods (`pollMs` each) a thread's page waits before reading the thread with no event to say it changed. */
const THREAD_QUIET_READS = 10;

/**
 * A thread page's live stream: its panels, re-read from the store and sent when they changed. They
 * are re-read after the thread's watch gives an event (at most once per `pollMs`: a turn's burst of
 * messages is one read), and, with no event, every THREAD_QUIET_READS × `pollMs` (a turn queued, or
 * a thread closed with no turn open, writes no event), and once more when the watch ends; so an
 * idle page does not read a long thread's transcript on every poll.
 */
function liveThread(store: StoreClient, id: string, pollMs: number) {
  const sent = new Map<string, string>();
  // The page was rendered just now: the watch's history (every turn so far) needs no read of its own.
  let readAt = Date.now();
  let stale = false;
  const panels = async (): Promise<SSEMessage[]> => {
    readAt = Date.now();
    stale = false;
    const thread = await store.get({ thread: id });
    if (thread === null) return [];
    const changed = Object.entries(threadPanels(thread, Date.now())).filter(([name, markup]) => sent.get(name) !== markup);
    for (const [name, markup] of changed) sent.set(name, markup);
    return changed.length === 0 ? [] : [{ event: 'panels', data: JSON.stringify(Object.fromEntries(changed)) }];
  };
  return {
    event: async (): Promise<SSEMessage[]> => {
      stale = true;
      return Date.now() - readAt >= pollMs ? panels() : [];
    },
    quiet: async (last: boolean): Promise<SSEMessage[]> =>
      last || stale || Date.now() - readAt >= THREAD_QUIET_READS * pollMs ? panels() : [],
  };
}

/** A turn's page, its live updates, and the forms that decide its parked calls or cancel it. */
function addTurnPages(app: Hono<Env>, options: ConsoleOptions): void {
  const { store } = options;
  app.get('/turns/:id', async (c) => {
    const turn = await store.get(c.req.param('id'));
    if (turn === null) return problem(c, 404, `There is no turn '${c.req.param('id')}'.`);
    const { waiting } = await listView(store, {});
    const stream = `/console/turns/${encodeURIComponent(turn.id)}/stream`;
    return c.html(page({ title: turn.id, csrf: c.get('session').csrf, waiting, stream }, turnBody(turn, c.get('session').csrf)));
  });

  app.get('/turns/:id/stream', async (c) => {
    const id = c.req.param('id');
    if ((await store.get(id)) === null) return c.body(null, 404);
    const live = liveTurn(store, id, c.get('session').csrf);
    const after = startAfter(c, undefined);
    const watch = (signal: AbortSignal) => store.watch(id, { after, pollMs: options.pollMs, signal });
    return watchStream(c, watch, live.event, options.pollMs, live.quiet);
  });

  app.post('/turns/:id/decide', async (c) => {
    const id = c.req.param('id');
    const form = DecideForm.safeParse(await c.req.parseBody());
    if (!form.success)
      return problem(
        c,
        400,
        `The decision form is incomplete (${form.error.issues[0]?.path.join('.')}); reload the page and try again.`,
      );
    const { call, action } = form.data;
    const reason = form.data.reason?.trim() ?? '';
    const csrfToken = c.get('session').csrf;
    // Reject asks for the reason the model reads first: a second step, never a reject without one.
    // That step shows the parked call, so it reads the turn; the decision itself is the store's to refuse.
    if (action === 'reject' && reason === '') {
      const turn = await store.get(id);
      if (turn === null) return problem(c, 404, `There is no turn '${id}'.`);
      const parked = turn.parked.find((p) => p.call.id === call);
      if (parked === undefined)
        return problem(
          c,
          409,
          `Call '${call}' of turn '${id}' is not waiting for a decision (it may have been decided already).`,
        );
      return c.html(
        page(
          { title: `Reject ${call}`, csrf: csrfToken, waiting: (await listView(store, {})).waiting },
          rejectPage(
            id,
            parked,
            csrfToken,
            form.data.reason === undefined ? null : 'Write the reason the model reads, then Reject.',
          ),
        ),
        form.data.reason === undefined ? 200 : 400,
      );
    }
    const decision: ApprovalDecision =
      action === 'reject'
        ? { type: 'reject', reason }
        : action === 'approve_always'
          ? { type: 'approve', remember: 'tool' }
          : { type: 'approve' };
    try {
      await store.decide(id, Object.fromEntries([[call, decision]]));
    } catch (error) {
      const refused = decideRefusal(error, id, call);
      return problem(c, refused.status, refused.message);
    }
    return c.redirect(`/console/turns/${encodeURIComponent(id)}`, 303);
  });

  app.post('/turns/:id/cancel', async (c) => {
    const id = c.req.param('id');
    const form = CancelForm.safeParse(await c.req.parseBody());
    if (!form.success) return problem(c, 400, 'The cancel form is incomplete; reload the page and try again.');
    if ((await store.get(id)) === null) return problem(c, 404, `There is no turn '${id}'.`);
    const reason = form.data.reason?.trim();
    await store.cancel(id, reason ? reason : 'cancelled from the console');
    return c.redirect(`/console/turns/${encodeURIComponent(id)}`, 303);
  });
}

/** What the page says when the store refuses a decision (404 or 409); anything else is rethrown. */
function decideRefusal(error: unknown, id: string, call: string): { status: 404 | 409; message: string } {
  if (error instanceof TurnNotFoundError) return { status: 404, message: `There is no turn '${id}'.` };
  if (error instanceof TurnNotWaitingError)
    return {
      status: 409,
      message: `Turn '${id}' is not waiting for approval (its status is ${error.status}); reload the page to see where it is.`,
    };
  if (error instanceof UnknownCallError)
    return {
      status: 409,
      message: `Turn '${id}' has no parked call '${call}'; reload the page to see the calls waiting for a decision.`,
    };
  if (error instanceof CallAlreadyDecidedError)
    return {
      status: 409,
      message: `Call '${call}' of turn '${id}' already has a decision in the store, so this one was not taken; the call still waits. Reload the turn to see its decisions, or cancel the turn.`,
    };
  throw error;
}

/**
 * A turn page's live stream: each event is its timeline entry (and, for a message, its transcript
 * bubble); the small panels are re-read after a status change or when the stream is quiet, and
 * sent only when they changed. What one event sends is bounded by that event, not by the turn.
 */
function liveTurn(store: StoreClient, id: string, csrf: string) {
  const sent = new Map<string, string>();
  let stale = true;
  const panels = async (): Promise<SSEMessage[]> => {
    stale = false;
    const turn = await store.get(id);
    if (turn === null) return [];
    const all: Record<string, string> = { ...turnPanels(turn, csrf), state: diagramState(turn.state, turn.status) };
    const changed = Object.entries(all).filter(([name, markup]) => sent.get(name) !== markup);
    for (const [name, markup] of changed) sent.set(name, markup);
    return changed.length === 0 ? [] : [{ event: 'panels', data: JSON.stringify(Object.fromEntries(changed)) }];
  };
  return {
    event: async (event: WatchEvent): Promise<SSEMessage[]> => {
      const entry = {
        timeline: timelineItem(event).value,
        ...(event.type === 'message' ? { transcript: transcriptItem(event.message).value } : {}),
      };
      const item = { event: 'timeline', id: String(event.seq), data: JSON.stringify(entry) };
      if (event.type === 'status') return [item, ...(await panels())];
      if (event.type === 'message') stale = true;
      return [item];
    },
    quiet: async (): Promise<SSEMessage[]> => (stale ? panels() : []),
  };
}
